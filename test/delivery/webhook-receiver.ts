import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { vi } from 'vitest';
import type { Config } from '../../src/config/config.js';
import type { Db } from '../../src/db/database.js';
import { deliverRound, type DeliveryDeps } from '../../src/delivery/delivery-round.js';
import { OutboxCounts } from '../../src/runtime/outbox-counts.js';
import type { Channels } from '../../src/delivery/send-message.js';

/** What a webhook test app needs so deliveries to a receiver on 127.0.0.1 succeed. */
export const LOOPBACK_ENV = { WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true', WEBHOOK_ALLOW_PRIVATE: '127.0.0.1' } as const;

/** One POST a receiver got: its headers (lower-case names, single values) and its body as sent. */
export interface Received {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** How a receiver answers its n-th request (0-based): a status, `hang` to never answer, or `handled` when it wrote the answer itself. */
export type Answer = (request: Received, n: number, response: ServerResponse) => number | 'hang' | 'handled';

export interface Receiver {
  /** `http://127.0.0.1:port/hook`. */
  readonly url: string;
  readonly port: number;
  readonly received: Received[];
  close(): Promise<void>;
}

function single(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

/** A real HTTP server on 127.0.0.1 that records every request; answers 204 unless told otherwise. */
export async function startReceiver(answer: Answer = () => 204, path = '/hook'): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const got = { path: request.url ?? '', headers: single(request.headers), body: Buffer.concat(chunks).toString('utf8') };
      received.push(got);
      const status = answer(got, received.length - 1, response);
      if (status === 'hang' || status === 'handled') return;
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status >= 400 ? `receiver says ${status}` : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Channels as the delivery loop builds them from the configuration (no mailer). */
export function channelsOf(config: Config): Channels {
  return { mailer: undefined, policy: { allowPrivate: config.notifications.webhookAllowPrivate } };
}

/** One delivery round, as the server's loop runs it; returns how many messages were due. */
export function deliver(deps: DeliveryDeps, channels: Channels, counts = new OutboxCounts()): Promise<number> {
  return deliverRound(deps, channels, counts, 'test-instance');
}

/**
 * Verifies a delivery as a receiver would, `new Webhook(secret).verify(body, headers)`, with the
 * receiver's clock at `nowMs` (the library checks the timestamp against its own clock).
 */
export function verifyAt(nowMs: number, secret: string, delivery: Received): unknown {
  vi.useFakeTimers({ toFake: ['Date'] });
  try {
    vi.setSystemTime(nowMs);
    return new Webhook(secret).verify(delivery.body, delivery.headers);
  } finally {
    vi.useRealTimers();
  }
}

/** The outbox rows, oldest first. */
export function outboxRows(db: Db) {
  return db.selectFrom('outbox').selectAll().orderBy('created_at').orderBy('id').execute();
}

export function attemptsOf(db: Db, messageId: string) {
  return db.selectFrom('outbox_attempts').selectAll().where('message_id', '=', messageId).orderBy('attempt').execute();
}
