import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

/** The account the test server accepts; SMTP_URL carries it. */
export const SMTP_USER = 'mailer';
export const SMTP_PASSWORD = 'smtp-S3cret';
export const SMTP_FROM = 'School sign-in <no-reply@school.example>';

/** One message the server took: the envelope, the raw text, and whether the session was encrypted. */
export interface ReceivedMail {
  readonly from: string;
  readonly to: readonly string[];
  readonly raw: string;
  readonly secure: boolean;
  readonly user: string | undefined;
}

export interface TestSmtpServer {
  readonly port: number;
  /** Every message accepted, in order. */
  readonly received: ReceivedMail[];
  /** Every AUTH attempt, with whether the session was encrypted when it was made. */
  readonly logins: { readonly user: string; readonly secure: boolean }[];
  /** SMTP_URL for this server: STARTTLS (smtp:), the self-signed certificate of smtp-server accepted. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * A real SMTP server (smtp-server) on 127.0.0.1, in this process: STARTTLS with its built-in
 * self-signed certificate, AUTH PLAIN/LOGIN for SMTP_USER, every message kept in `received`.
 * `options` override the defaults (onConnect, onRcptTo, hideSTARTTLS, disabledCommands...).
 */
export async function startSmtpServer(options: SMTPServerOptions = {}, port = 0): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const logins: { user: string; secure: boolean }[] = [];
  const server = new SMTPServer({
    secure: false,
    logger: false,
    disableReverseLookup: true,
    authMethods: ['PLAIN', 'LOGIN'],
    closeTimeout: 200,
    onAuth(auth, session, callback) {
      logins.push({ user: auth.username ?? '', secure: session.secure });
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) return callback(null, { user: SMTP_USER });
      callback(Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const { mailFrom, rcptTo } = session.envelope;
        received.push({
          from: mailFrom === false ? '' : mailFrom.address,
          to: rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          secure: session.secure,
          user: session.user,
        });
        callback();
      });
    },
    ...options,
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  if (address === null || typeof address === 'string') throw new Error('the SMTP server has no port');
  return {
    port: address.port,
    received,
    logins,
    url: smtpUrl(address.port),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** SMTP_URL for a server on 127.0.0.1:`port` (STARTTLS, the test certificate accepted). */
export function smtpUrl(port: number): string {
  return `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${port}/?tls.rejectUnauthorized=false`;
}

/** One part of a message: its headers (names lowercase, folded lines joined) and its decoded body. */
export interface MimePart {
  readonly headers: ReadonlyMap<string, string>;
  readonly body: string;
}

function splitHead(text: string): { headers: Map<string, string>; body: string } {
  const end = text.indexOf('\r\n\r\n');
  const head = end === -1 ? text : text.slice(0, end);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body: end === -1 ? '' : text.slice(end + 4) };
}

function decodeBody(body: string, encoding: string | undefined): string {
  switch (encoding?.toLowerCase()) {
    case 'quoted-printable':
      return Buffer.from(
        body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
        'latin1',
      ).toString('utf8');
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    default:
      return body;
  }
}

/**
 * The top-level headers of a raw message and its leaf parts, each decoded (quoted-printable or
 * base64): enough of MIME for the messages Nodemailer writes (multipart/alternative).
 */
export function parseMessage(raw: string): { headers: ReadonlyMap<string, string>; parts: MimePart[] } {
  const top = splitHead(raw);
  const leaves = (part: { headers: Map<string, string>; body: string }): MimePart[] => {
    const type = part.headers.get('content-type') ?? 'text/plain';
    const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
    if (!type.toLowerCase().startsWith('multipart/') || boundary === undefined) {
      return [{ headers: part.headers, body: decodeBody(part.body, part.headers.get('content-transfer-encoding')) }];
    }
    const sections = part.body.split(`--${boundary}`).slice(1);
    return sections.filter((section) => !section.startsWith('--')).flatMap((section) => leaves(splitHead(section.replace(/^\r\n/, ''))));
  };
  return { headers: top.headers, parts: leaves(top) };
}

/** The decoded body of the part of `type` (text/plain, text/html); fails when there is none. */
export function partOf(message: { parts: readonly MimePart[] }, type: string): string {
  const part = message.parts.find((candidate) => (candidate.headers.get('content-type') ?? '').toLowerCase().startsWith(type));
  if (part === undefined) throw new Error(`the message has no ${type} part`);
  return part.body;
}
