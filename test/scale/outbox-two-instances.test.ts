/**
 * Two real `serve` processes (`npm run build` first) on one PostgreSQL database deliver one outbox:
 * sign-ins from new client addresses, made alternately through both, each write a
 * login.new_address webhook message; both instances' delivery loops wake for their own events
 * and then list every due message, the other's included, while a slow receiver (300 ms an
 * answer) keeps deliveries overlapping. The conditional claim must let exactly one instance send
 * each: the receiver gets every message, each webhook-id exactly once, and every message has
 * exactly one successful attempt.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_DIALECTS, createPostgresDatabase } from '../helpers/database.js';
import { freePort } from '../helpers/free-port.js';
import { cleanupOps, loginHttp, seedWithCli, startServer, type RunningServer } from '../helpers/ops-server.js';
import { parseExposition, valueOf } from '../helpers/ops-prometheus.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

const PASSWORD = 'correct horse battery staple';
/** Sign-ins from new addresses: half through each instance. */
const EVENTS = 40;
const RECEIVER_DELAY_MS = 300;
/** Each instance wakes 200 ms after its own events; 30 s is the longest it waits for another's. */
const DELIVERY_DEADLINE_MS = 90_000;

/** The client address of the nth sign-in, forwarded by the trusted proxy (TRUST_PROXY=127.0.0.1). */
const addressOf = (n: number) => `198.51.100.${n + 1}`;

async function query<Row extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** This instance's delivered webhook attempts, from its /metrics. */
async function deliveredBy(server: RunningServer): Promise<number> {
  const exposition = parseExposition(await (await fetch(`${server.managementUrl}/metrics`)).text());
  return valueOf(exposition, 'school_auth_outbox_attempts_total', { channel: 'webhook', outcome: 'delivered' }) ?? 0;
}

describe.runIf(TEST_DIALECTS.includes('postgres'))('the outbox with two instances on one PostgreSQL', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await cleanupOps();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  it(`delivers each of ${EVENTS} webhooks exactly once while both instances deliver`, async () => {
    const database = await createPostgresDatabase();
    cleanups.push(() => database.drop());
    const receiver = await startWebhookReceiver(await freePort(), { delayMs: RECEIVER_DELAY_MS });
    cleanups.push(() => receiver.close());
    const env = {
      DATABASE_URL: database.url,
      ISSUER: 'https://auth.test',
      LOGIN_THROTTLE: 'off',
      TRUST_PROXY: '127.0.0.1',
      WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true',
      WEBHOOK_ALLOW_PRIVATE: '127.0.0.1',
      LOG_LEVEL: 'warn',
    };
    const servers = await Promise.all([0, 1].map(() => startServer(env)));
    const [a, b] = servers as [RunningServer, RunningServer];

    await seedWithCli(a, PASSWORD);
    const added = await a.cli(['webhooks', 'add', '--url', `http://127.0.0.1:${receiver.port}/hooks`]);
    expect(added.code, added.stderr).toBe(0);
    const [announced = '', secret = ''] = added.stdout.trimEnd().split('\n');
    const webhookId = /^webhook (wh_\S+) added/.exec(announced)?.[1];
    expect(webhookId, added.stdout).toBeDefined();

    // The first sign-in ever (from the proxy itself, nothing forwarded): no address is new yet.
    expect((await loginHttp(a, PASSWORD)).status).toBe(200);
    expect(await query(database.url, 'select id from outbox')).toEqual([]);

    // Then each sign-in from a new address: one through each instance at once, round after round.
    for (let n = 0; n < EVENTS; n += 2) {
      const answers = await Promise.all([a, b].map((server, i) => loginHttp(server, PASSWORD, { 'x-forwarded-for': addressOf(n + i) })));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    }
    const messages = await query<{ id: string; type: string; payload: string }>(database.url, 'select id, type, payload from outbox where channel = $1 and target = $2', ['webhook', webhookId]);
    expect(messages).toHaveLength(EVENTS);
    expect(new Set(messages.map((message) => message.type))).toEqual(new Set(['login.new_address']));
    expect(await query(database.url, 'select id from outbox where not (channel = $1 and target = $2)', ['webhook', webhookId]), 'no other message (no e-mail address is set)').toEqual([]);

    const started = Date.now();
    let states: { state: string; n: number }[] = [];
    for (const deadline = started + DELIVERY_DEADLINE_MS; Date.now() < deadline; await sleep(250)) {
      states = (await query<{ state: string; n: string }>(database.url, 'select state, count(*) as n from outbox group by state order by state')).map((row) => ({ state: row.state, n: Number(row.n) }));
      if (states.length === 1 && states[0]!.state === 'delivered') break;
    }
    const deliveredAfterMs = Date.now() - started;
    expect(states, `outbox states after ${deliveredAfterMs} ms`).toEqual([{ state: 'delivered', n: EVENTS }]);

    // Both instances delivered: their own counters, settled after each claim won, add up to the messages.
    let counted: number[] = [];
    await expect
      .poll(
        async () => {
          counted = await Promise.all(servers.map((server) => deliveredBy(server)));
          return counted[0]! + counted[1]!;
        },
        { timeout: 10_000, interval: 200 },
      )
      .toBe(EVENTS);
    expect(Math.min(...counted), `delivered per instance: ${counted.join(' and ')}`).toBeGreaterThan(0);

    // Stopped (each after its round in progress): nothing more can arrive at the receiver.
    expect(await Promise.all(servers.map(({ server }) => server.stop('SIGTERM')))).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);

    const ids = receiver.received.map((request) => request.headers['webhook-id'] ?? '');
    const perId = new Map<string, number>();
    for (const id of ids) perId.set(id, (perId.get(id) ?? 0) + 1);
    const attempts = await query<{ message_id: string; attempt: number; ok: number; status: number | null; error: string | null }>(
      database.url,
      'select message_id, attempt, ok, status, error from outbox_attempts order by message_id, attempt',
    );
    const failed = attempts.filter((attempt) => attempt.ok !== 1);
    expect(
      [...perId].filter(([, count]) => count > 1),
      `webhook-ids received more than once (failed attempts: ${JSON.stringify(failed)})`,
    ).toEqual([]);
    expect(perId.size).toBe(messages.length);
    expect(new Set(ids)).toEqual(new Set(messages.map((message) => message.id)));

    // Every request is a message as written, signed with the webhook's secret.
    const payloads = new Map(messages.map((message) => [message.id, message.payload]));
    const verifier = new Webhook(secret);
    const addresses = receiver.received.map((request) => {
      expect(request.body).toBe(payloads.get(request.headers['webhook-id']!));
      const payload = verifier.verify(request.body, request.headers) as { type: string; data: { ip: string; detail: string } };
      expect(payload.type).toBe('login.new_address');
      expect(payload.data.detail).toBe(payload.data.ip);
      return payload.data.ip;
    });
    expect(new Set(addresses)).toEqual(new Set(Array.from({ length: EVENTS }, (_, n) => addressOf(n))));

    // One successful attempt per message, and the rows settled: no lease left behind.
    const okPerMessage = new Map<string, number>();
    for (const attempt of attempts) if (attempt.ok === 1) okPerMessage.set(attempt.message_id, (okPerMessage.get(attempt.message_id) ?? 0) + 1);
    expect(okPerMessage.size).toBe(EVENTS);
    expect([...okPerMessage].filter(([, count]) => count !== 1)).toEqual([]);
    expect(new Set(okPerMessage.keys())).toEqual(new Set(messages.map((message) => message.id)));
    const settled = await query<{ n: string }>(database.url, "select count(*) as n from outbox where state = 'delivered' and lease_owner is null and lease_until is null and attempts = 1 + (select count(*) from outbox_attempts t where t.message_id = outbox.id and t.ok = 0)");
    expect(Number(settled[0]!.n)).toBe(EVENTS);

    console.log(
      `outbox, two instances: ${EVENTS} messages delivered ${deliveredAfterMs} ms after the last sign-in, ${counted[0]} by one instance and ${counted[1]} by the other; ` +
        `${receiver.received.length} requests received, at most ${receiver.mostAtOnce()} at once; ${failed.length} failed attempts`,
    );
  }, 240_000);
});
