/**
 * Real-socket helpers for the tests of a served process (abuse, crash, shutdown, management
 * listener): plain HTTP requests with node:http, each on a fresh connection, and raw bytes with
 * node:net.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface HttpAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface HttpOptions {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
  readonly timeoutMs?: number;
  readonly host?: string;
}

/** One request on a fresh connection; rejects on a socket error or after `timeoutMs`. */
export function send(port: number, path: string, options: HttpOptions = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: options.host ?? '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(options.timeoutMs ?? 10_000, () => req.destroy(new Error(`${options.method ?? 'GET'} ${path}: no answer within ${options.timeoutMs ?? 10_000} ms`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * One HTTP request to `url` on its own fresh connection (no keep-alive pool), so a test controls
 * exactly when each connection is opened; no timeout. Rejects on a socket error (e.g. ECONNREFUSED).
 */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<HttpAnswer> {
  return new Promise((resolveAnswer, reject) => {
    const request = httpRequest(url, { method: options.method ?? 'GET', headers: { connection: 'close', ...options.headers }, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.once('end', () => resolveAnswer({ status: response.statusCode ?? 0, headers: response.headers, body }));
      response.once('error', reject);
    });
    request.once('error', reject);
    request.end(options.body);
  });
}

/** POST a JSON value (already a string, or serialized here). */
export function postJsonTo(port: number, path: string, body: unknown, options: HttpOptions = {}): Promise<HttpAnswer> {
  return send(port, path, {
    ...options,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export interface RawResponse {
  readonly status: number;
  readonly head: string;
  readonly body: string;
  /** Milliseconds from connecting to the complete response. */
  readonly elapsedMs: number;
}

/**
 * A raw HTTP/1.1 exchange: opens a socket, lets `drive` write to it, and resolves with the first
 * complete response (by Content-Length) or what arrived when the server closed the socket.
 */
export function rawExchange(port: number, drive: (socket: Socket) => void, timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect({ host: '127.0.0.1', port });
    let received = Buffer.alloc(0);
    let done = false;
    const finish = (error?: Error) => {
      if (done) return;
      const parsed = parseResponse(received);
      if (parsed === undefined && error !== undefined) {
        done = true;
        clearTimeout(timer);
        socket.destroy();
        reject(error);
        return;
      }
      if (parsed === undefined) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parsed, elapsedMs: performance.now() - started });
    };
    const timer = setTimeout(() => finish(new Error(`no complete response within ${timeoutMs} ms; got: ${received.toString('latin1').slice(0, 300)}`)), timeoutMs);
    socket.on('connect', () => drive(socket));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      finish();
    });
    // Writing after the server answered and closed may fail: what it answered is what counts, so
    // a socket error is only reported once the socket has closed without a complete response.
    let failure: Error | undefined;
    socket.on('error', (error) => (failure ??= error));
    socket.on('close', () =>
      finish(failure ?? new Error(`connection closed without a complete response; got: ${received.toString('latin1').slice(0, 300)}`)),
    );
  });
}

function parseResponse(bytes: Buffer): Omit<RawResponse, 'elapsedMs'> | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const head = bytes.subarray(0, end).toString('latin1');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
  const length = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1];
  const body = bytes.subarray(end + 4);
  if (length === undefined || body.length < Number(length)) return undefined;
  return { status, head, body: body.subarray(0, Number(length)).toString('utf8') };
}
