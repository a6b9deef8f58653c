import { createTransport, type Transporter } from 'nodemailer';
import type { NotificationsConfig } from '../config/notifications.js';
import type { EmailText } from './email-text.js';

/** How long a connection, the server's greeting and each exchange may take before an attempt fails. */
const TIMEOUT_MS = 10_000;

export interface MailResult {
  /** The server took the message for at least one address (`error` then names those it refused). */
  readonly sent: boolean;
  /** The server refused for good (a 5xx, such as an unknown recipient): retrying cannot help. */
  readonly permanent: boolean;
  readonly error: string | null;
}

export interface Mailer {
  send(to: readonly string[], message: EmailText): Promise<MailResult>;
  /** Connects, upgrades and logs in as a send would, sending nothing: the problem, or undefined when all went well. */
  verify(): Promise<string | undefined>;
  close(): void;
}

/**
 * Sends with Nodemailer over SMTP_URL: `smtps:` speaks TLS from the start; `smtp:` must upgrade
 * with STARTTLS, or nothing is sent (a server that does not offer it fails the attempt).
 */
export function createMailer(smtp: NonNullable<NotificationsConfig['smtp']>, timeoutMs = TIMEOUT_MS): Mailer {
  const implicitTls = smtp.url.startsWith('smtps:');
  const transport: Transporter = createTransport({
    url: smtp.url,
    requireTLS: !implicitTls,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  return {
    async send(to, message) {
      try {
        const sent = await transport.sendMail({ from: smtp.from, to: [...to], subject: message.subject, text: message.text, html: message.html });
        const rejected = (sent.rejected as unknown[]).map(String);
        const error = rejected.length === 0 ? null : `refused ${rejected.join(', ')}`;
        return { sent: rejected.length < to.length, permanent: rejected.length === to.length, error };
      } catch (error) {
        const { responseCode: code, code: stage, command } = error as { responseCode?: number; code?: string; command?: string };
        // Final only when this message is refused (its recipients or content): a 5xx to STARTTLS,
        // AUTH or the sender (MAIL FROM) is the relay's configuration, which an operator fixes, so
        // those are retried.
        const sender = typeof command === 'string' && command.toUpperCase().startsWith('MAIL');
        const refused = (stage === 'EENVELOPE' && !sender) || stage === 'EMESSAGE';
        return { sent: false, permanent: refused && code !== undefined && code >= 500, error: (error as Error).message.slice(0, 500) };
      }
    },
    async verify() {
      try {
        await transport.verify();
        return undefined;
      } catch (error) {
        return (error as Error).message.slice(0, 300);
      }
    },
    close() {
      transport.close();
    },
  };
}
