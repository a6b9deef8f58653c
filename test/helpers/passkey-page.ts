import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Page } from 'playwright-core';
import { freePort } from './free-port.js';

/**
 * A stand-in front end for the browser passkey test: one HTML page, served from 127.0.0.1, that
 * calls the API same-origin (this server forwards /admin/* and /auth/* to school-auth), so the
 * browser needs no CORS and the WebAuthn origin is the page's own. The browser must open it as
 * http://localhost:<port>/: an IP address cannot be an RP ID, and localhost is a secure context.
 */

/** What the page defines on its global object, for `page.evaluate`. */
export interface PasskeyPageApi {
  call(method: string, path: string, body?: unknown, token?: string): Promise<ApiAnswer>;
  enrollPasskey(token: string, name?: string): Promise<PasskeyStep>;
  verifyWithPasskey(mfaToken: string): Promise<PasskeyStep>;
}

/** A JSON object as the page received it (a body that is not JSON comes as `{ text }`). */
export type JsonObject = { readonly [key: string]: unknown };

export interface ApiAnswer {
  readonly status: number;
  readonly body: JsonObject;
}

/** One ceremony: where it stopped, the options the server gave, the browser's credential JSON, the last answer. */
export interface PasskeyStep extends ApiAnswer {
  readonly step: 'registration-options' | 'enroll' | 'options' | 'verify';
  readonly options?: JsonObject;
  readonly credential?: JsonObject;
}

/** The page's own functions, run in the browser (each callback is serialized: it can close over nothing). */
export function inPage(page: Page): PasskeyPageApi {
  return {
    call: (method, path, body, token) =>
      page.evaluate(([m, p, b, t]) => (globalThis as unknown as PasskeyPageApi).call(m, p, b, t), [method, path, body, token] as const),
    enrollPasskey: (token, name) => page.evaluate(([t, n]) => (globalThis as unknown as PasskeyPageApi).enrollPasskey(t, n), [token, name] as const),
    verifyWithPasskey: (mfaToken) => page.evaluate((t) => (globalThis as unknown as PasskeyPageApi).verifyWithPasskey(t), mfaToken),
  };
}

// The page uses only the browser's own JSON helpers (no library), as a small front end would.
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>school-auth passkeys</title></head>
<body><h1>school-auth passkeys</h1><script>
async function call(method, path, body, token) {
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = 'Bearer ' + token;
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let parsed;
  try { parsed = JSON.parse(text); } catch { parsed = { text }; }
  return { status: response.status, body: parsed };
}
async function enrollPasskey(token, name) {
  const options = await call('POST', '/admin/auth/mfa/webauthn/registration-options', {}, token);
  if (options.status !== 200) return { step: 'registration-options', ...options };
  const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(options.body);
  const credential = (await navigator.credentials.create({ publicKey })).toJSON();
  const enrolled = await call('POST', '/admin/auth/mfa/webauthn', name === undefined ? { credential } : { credential, name }, token);
  return { step: 'enroll', options: options.body, credential, ...enrolled };
}
async function verifyWithPasskey(mfaToken) {
  const options = await call('POST', '/admin/auth/mfa/webauthn/options', { mfa_token: mfaToken });
  if (options.status !== 200) return { step: 'options', ...options };
  const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(options.body);
  const credential = (await navigator.credentials.get({ publicKey })).toJSON();
  const verified = await call('POST', '/admin/auth/mfa/verify', { mfa_token: mfaToken, method: 'webauthn', credential });
  return { step: 'verify', options: options.body, credential, ...verified };
}
Object.assign(globalThis, { call, enrollPasskey, verifyWithPasskey });
</script></body></html>
`;

export interface PasskeyPage {
  /** http://localhost:<port>/ (open this one, not 127.0.0.1). */
  readonly url: string;
  /** The page's origin, for WEBAUTHN_ORIGINS. */
  readonly origin: string;
  /** Method and path of every request this server received, in order. */
  readonly received: string[];
  /** Where /admin/* and /auth/* go from now on (503 before): the API starts after the page's port is known. */
  forwardTo(apiUrl: string): void;
  close(): Promise<void>;
}

const FORWARDED = /^\/(admin|auth)\//;

/** Serves the page on a free port of 127.0.0.1; the API paths are forwarded once `forwardTo` names the API. */
export async function servePasskeyPage(): Promise<PasskeyPage> {
  const port = await freePort();
  const received: string[] = [];
  let apiUrl: string | undefined;
  const server = createServer((incoming, outgoing) => {
    received.push(`${incoming.method} ${incoming.url}`);
    if (FORWARDED.test(incoming.url ?? '')) {
      if (apiUrl === undefined) return void outgoing.writeHead(503).end();
      return forward(apiUrl, incoming, outgoing);
    }
    if (incoming.method === 'GET' && incoming.url === '/') {
      return void outgoing.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(PAGE);
    }
    outgoing.writeHead(404).end();
  });
  await new Promise<void>((listening, failed) => {
    server.once('error', failed);
    server.listen(port, '127.0.0.1', () => listening());
  });
  const origin = `http://localhost:${port}`;
  return {
    url: `${origin}/`,
    origin,
    received,
    forwardTo: (url) => void (apiUrl = url),
    close: () =>
      new Promise<void>((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}

function forward(apiUrl: string, incoming: IncomingMessage, outgoing: ServerResponse): void {
  const target = new URL(incoming.url ?? '/', apiUrl);
  const headers = { ...incoming.headers, host: target.host };
  const upstream = httpRequest(target, { method: incoming.method, headers, agent: false }, (answer) => {
    outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(outgoing);
  });
  upstream.once('error', (error) => {
    if (!outgoing.headersSent) outgoing.writeHead(502, { 'content-type': 'text/plain' });
    outgoing.end(`proxy error: ${error.message}`);
  });
  incoming.pipe(upstream);
}
