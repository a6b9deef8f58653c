/**
 * Crash safety of the notification outbox with the real server (`node dist/cli/main.js serve`;
 * `npm run build` first): an admin changes their password through POST /admin/auth/password and
 * the instant the answer arrives the server is killed with SIGKILL, while the webhook's receiver
 * is not even listening. The message was written in the transaction of the change, so once the
 * receiver listens and the server runs again on the same storage, the admin.password_changed
 * webhook arrives, signed (Standard Webhooks, verified with the `standardwebhooks` package and the
 * secret `webhooks add` printed), exactly once, and its outbox row is `delivered`.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_DIALECTS, createPostgresDatabase } from '../helpers/database.js';
import { freePort } from '../helpers/free-port.js';
import { OPS_SCHOOL, OPS_USERNAME, cleanupOps, loginHttp, seedWithCli, startServer } from '../helpers/ops-server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const PASSWORD = 'correct horse battery staple';
const NEW_PASSWORD = 'a new and longer passphrase';
/** The first failed attempt's retry is 5 to 6.25 s away; a loaded machine adds to it. */
const DELIVERY_DEADLINE_MS = 60_000;

interface OutboxRow {
  id: string;
  type: string;
  channel: string;
  target: string;
  state: string;
  attempts: number;
  payload: string;
  lease_until: number | null;
  next_attempt_at: number;
}

interface AttemptRow {
  message_id: string;
  attempt: number;
  ok: number;
  status: number | null;
  error: string | null;
}

interface OutboxSnapshot {
  messages: OutboxRow[];
  attempts: AttemptRow[];
}

type Storage = { dialect: 'sqlite'; file: string } | { dialect: 'postgres'; url: string };

const numberOrNull = (value: unknown) => (value === null || value === undefined ? null : Number(value));

/** The outbox and its attempts, read straight from the storage (the server may be running). */
async function readOutbox(storage: Storage): Promise<OutboxSnapshot> {
  let messages: Record<string, unknown>[];
  let attempts: Record<string, unknown>[];
  if (storage.dialect === 'sqlite') {
    const db = new SQLite(storage.file, { readonly: true, fileMustExist: true });
    try {
      messages = db.prepare('select * from outbox order by created_at, id').all() as Record<string, unknown>[];
      attempts = db.prepare('select * from outbox_attempts order by message_id, attempt').all() as Record<string, unknown>[];
    } finally {
      db.close();
    }
  } else {
    const client = new pg.Client({ connectionString: storage.url });
    await client.connect();
    try {
      messages = (await client.query<Record<string, unknown>>('select * from outbox order by created_at, id')).rows;
      attempts = (await client.query<Record<string, unknown>>('select * from outbox_attempts order by message_id, attempt')).rows;
    } finally {
      await client.end();
    }
  }
  return {
    messages: messages.map((row) => ({
      id: String(row.id),
      type: String(row.type),
      channel: String(row.channel),
      target: String(row.target),
      state: String(row.state),
      attempts: Number(row.attempts),
      payload: String(row.payload),
      lease_until: numberOrNull(row.lease_until),
      next_attempt_at: Number(row.next_attempt_at),
    })),
    attempts: attempts.map((row) => ({
      message_id: String(row.message_id),
      attempt: Number(row.attempt),
      ok: Number(row.ok),
      status: numberOrNull(row.status),
      error: (row.error as string | null) ?? null,
    })),
  };
}

/**
 * When the kill lands: the instant the change is answered (before the delivery loop, 200 ms later,
 * looks), or once a first attempt has met the closed port, so the restarted server must keep to
 * the retry it was given (5 to 6.25 s later) rather than lose or rush it.
 */
const MOMENTS = ['at the answer', 'after a failed attempt'] as const;

describe.each(TEST_DIALECTS)('the outbox across a SIGKILL (%s)', (dialect) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await cleanupOps();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  it.each(MOMENTS)('delivers the webhook of a password change, killed %s, signed, once the receiver is up', async (moment) => {
    const receiverPort = await freePort();
    const hookUrl = `http://127.0.0.1:${receiverPort}/hooks/school-auth`;
    const env: Record<string, string> = { WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true', WEBHOOK_ALLOW_PRIVATE: '127.0.0.1', LOG_LEVEL: 'warn' };
    if (dialect === 'postgres') {
      const database = await createPostgresDatabase();
      cleanups.push(() => database.drop());
      env.DATABASE_URL = database.url;
      env.ISSUER = 'https://auth.test';
    }

    const first = await startServer(env);
    const storage: Storage = dialect === 'sqlite' ? { dialect, file: join(first.dataDir, 'school-auth.sqlite') } : { dialect, url: env.DATABASE_URL! };
    await seedWithCli(first, PASSWORD);
    const added = await first.cli(['webhooks', 'add', '--url', hookUrl]);
    expect(added.code, added.stderr).toBe(0);
    const [announced = '', secret = ''] = added.stdout.trimEnd().split('\n');
    const webhookId = /^webhook (wh_\S+) added/.exec(announced)?.[1];
    expect(webhookId, added.stdout).toBeDefined();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);

    const login = await loginHttp(first, PASSWORD);
    expect(login.status).toBe(200);
    const { access_token } = (await login.json()) as { access_token: string };
    // Nothing to deliver yet: the first sign-in ever is from no new address, webhook.added tells no one.
    expect((await readOutbox(storage)).messages).toEqual([]);

    const changed = await fetch(`${first.url}/admin/auth/password`, {
      method: 'POST',
      headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ current_password: PASSWORD, new_password: NEW_PASSWORD }),
    });
    if (moment === 'at the answer') {
      // The instant the answer's head arrives, before even reading it.
      first.child.kill('SIGKILL');
    } else {
      expect(changed.status).toBe(204);
      let seen = await readOutbox(storage);
      for (const until = Date.now() + 30_000; Date.now() < until && seen.messages[0]?.attempts !== 1; await sleep(50)) seen = await readOutbox(storage);
      expect(seen.attempts, 'the first attempt, settled as failed').toEqual([expect.objectContaining({ attempt: 1, ok: 0, status: null })]);
      first.child.kill('SIGKILL');
    }
    const killedAt = Date.now();
    expect(changed.status).toBe(204);
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });

    // What the crash left: the one message, written with the change; an attempt may have been made
    // before the kill (the loop wakes 200 ms after the event), which met a closed port.
    const left = await readOutbox(storage);
    expect(left.messages.map(({ type, channel, target, state }) => ({ type, channel, target, state }))).toEqual([
      { type: 'admin.password_changed', channel: 'webhook', target: webhookId, state: 'pending' },
    ]);
    const message = left.messages[0]!;
    expect(left.attempts.filter((attempt) => attempt.ok === 1)).toEqual([]);
    if (moment === 'after a failed attempt') {
      expect(message.attempts).toBe(1);
      expect(message.lease_until).toBeNull();
      // The retry: 5 to 6.25 s after the failure, itself after the message was written.
      expect(message.next_attempt_at).toBeGreaterThanOrEqual(Date.parse((JSON.parse(message.payload) as { timestamp: string }).timestamp) + 5_000);
    }

    const receiver: WebhookReceiver = await startWebhookReceiver(receiverPort);
    cleanups.push(() => receiver.close());
    const restartedAt = Date.now();
    const second = await startServer(env, { cwd: first.cwd });
    // A kill between claiming the message and settling it leaves a lease (120 s) only time ends.
    const deadline = Math.max(Date.now() + DELIVERY_DEADLINE_MS, (message.lease_until ?? 0) + 30_000);
    let snapshot = await readOutbox(storage);
    while (Date.now() < deadline && (receiver.received.length === 0 || snapshot.messages[0]?.state !== 'delivered')) {
      await sleep(250);
      snapshot = await readOutbox(storage);
    }
    const deliveredAfterMs = Date.now() - restartedAt;
    expect(receiver.received.length, `nothing delivered within the deadline; outbox: ${JSON.stringify(snapshot)}\nserver: ${second.stdout()}${second.stderr()}`).toBeGreaterThan(0);
    expect(snapshot.messages.map(({ id, state }) => ({ id, state }))).toEqual([{ id: message.id, state: 'delivered' }]);

    // Exactly one request, and it is the message: verified with the secret printed at `webhooks add`.
    expect(receiver.received).toHaveLength(1);
    const request = receiver.received[0]!;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/hooks/school-auth');
    expect(request.headers['webhook-id']).toBe(message.id);
    expect(request.body).toBe(message.payload);
    const verified = new Webhook(secret).verify(request.body, request.headers) as { type: string; timestamp: string; data: Record<string, unknown> };
    expect(verified.type).toBe('admin.password_changed');
    expect(verified.data).toMatchObject({ school_id: OPS_SCHOOL, username: OPS_USERNAME, ip: '127.0.0.1' });
    expect(Date.parse(verified.timestamp)).toBeLessThanOrEqual(killedAt);
    // Not before the retry the failed attempt was given.
    expect(request.at).toBeGreaterThanOrEqual(message.next_attempt_at);
    // Another secret does not verify it.
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(request.body, request.headers)).toThrow();

    // The attempts: any before the kill failed (nobody listened), the last one is the 200.
    const attempts = snapshot.attempts.filter((attempt) => attempt.message_id === message.id);
    expect(attempts.length).toBeGreaterThanOrEqual(1);
    expect(attempts.at(-1)).toMatchObject({ ok: 1, status: 200, error: null });
    expect(attempts.slice(0, -1).filter((attempt) => attempt.ok === 1)).toEqual([]);
    expect(snapshot.messages[0]!.attempts).toBe(attempts.length);

    // What an operator sees: the same, through the command line.
    const deliveries = await second.cli(['webhooks', 'deliveries', '--json']);
    expect(deliveries.code, deliveries.stderr).toBe(0);
    const listed = JSON.parse(deliveries.stdout) as { id: string; type: string; channel: string; state: string; attempts: string[] }[];
    expect(listed).toEqual([expect.objectContaining({ id: message.id, type: 'admin.password_changed', channel: 'webhook', state: 'delivered' })]);
    expect(listed[0]!.attempts.at(-1)).toMatch(/ ok 200$/);

    // The change itself survived the kill too: the new password signs in.
    expect((await loginHttp(second, NEW_PASSWORD)).status).toBe(200);
    expect(await second.server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    console.log(
      `outbox SIGKILL (${dialect}, killed ${moment}): ${left.attempts.length} attempt(s) before the kill; delivered ${deliveredAfterMs} ms after the restart began, ` +
        `${attempts.length} attempt(s) in all`,
    );
  }, 240_000);
});
