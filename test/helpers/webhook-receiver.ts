/**
 * A real webhook endpoint for tests of the outbox's delivery through real server processes: a
 * node:http server on 127.0.0.1 that records every request (its headers and raw body, as they
 * arrived) and answers 200, after `delayMs` when asked to be slow. The service reaches it over
 * plain http with WEBHOOK_ALLOW_HTTP_LOOPBACK=true and WEBHOOK_ALLOW_PRIVATE=127.0.0.1.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  /** Every header, lower-case names (repeated headers joined by ", "). */
  readonly headers: Readonly<Record<string, string>>;
  /** The body exactly as sent: what a Standard Webhooks signature covers. */
  readonly body: string;
  /** When its body had arrived (epoch ms). */
  readonly at: number;
}

export interface WebhookReceiver {
  readonly port: number;
  /** Everything received so far, in order of arrival. */
  readonly received: readonly ReceivedRequest[];
  /** How many requests are being answered right now, and the most at once so far. */
  readonly inFlight: () => number;
  readonly mostAtOnce: () => number;
  close(): Promise<void>;
}

function headersOf(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** Listens on 127.0.0.1:`port` (a port chosen earlier, e.g. by freePort) and resolves once it does. */
export async function startWebhookReceiver(port: number, options: { readonly delayMs?: number } = {}): Promise<WebhookReceiver> {
  const received: ReceivedRequest[] = [];
  let inFlight = 0;
  let mostAtOnce = 0;
  const server = createServer((request, response) => {
    inFlight += 1;
    mostAtOnce = Math.max(mostAtOnce, inFlight);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ method: request.method ?? '', path: request.url ?? '', headers: headersOf(request), body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      void sleep(options.delayMs ?? 0).then(() => {
        inFlight -= 1;
        response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port,
    received,
    inFlight: () => inFlight,
    mostAtOnce: () => mostAtOnce,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
