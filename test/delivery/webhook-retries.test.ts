import { afterEach, describe, expect, it } from 'vitest';
import { CLI_CONTEXT, recordEvent } from '../../src/auth/events.js';
import { deliverRound } from '../../src/delivery/delivery-round.js';
import { OutboxCounts } from '../../src/runtime/outbox-counts.js';
import { afterFailure, RETRY_WINDOW_MS } from '../../src/delivery/retry.js';
import { addWebhook, removeWebhook } from '../../src/delivery/webhooks.js';
import { useTestApps, type TestApp } from '../helpers/app.js';
import { TEST_DIALECTS } from '../helpers/database.js';
import { attemptsOf, channelsOf, deliver, LOOPBACK_ENV, outboxRows, startReceiver, type Answer, type Receiver } from './webhook-receiver.js';

const HOUR = 3600_000;
/** The delay before attempt n+1, without jitter: 5 s, then four times longer each time, at most 8 h. */
const BASE_DELAYS = [5_000, 20_000, 80_000, 320_000, 1_280_000, 5_120_000, 20_480_000, 8 * HOUR, 8 * HOUR, 8 * HOUR];

describe('afterFailure: the retry schedule', () => {
  const created = Date.UTC(2026, 0, 5);
  it('waits 5 s, 20 s, 80 s... four times longer each time, at most 8 h', () => {
    BASE_DELAYS.forEach((delay, index) => {
      const now = created + 1000 * index;
      expect(afterFailure(created, index + 1, now, () => 0)).toEqual({ state: 'pending', at: now + delay });
    });
  });
  it('stretches each delay by up to a quarter at random, never more', () => {
    BASE_DELAYS.forEach((delay, index) => {
      expect(afterFailure(created, index + 1, created, () => 0.5)).toEqual({ state: 'pending', at: created + delay * 1.125 });
      expect(afterFailure(created, index + 1, created, () => 0.999999)).toEqual({ state: 'pending', at: created + Math.round(delay * (1 + 0.999999 / 4)) });
    });
    // The longest wait there can be: 8 h and a quarter, 10 h, even after 40 failures.
    const longest = afterFailure(created, 40, created, () => 0.999999);
    expect(longest.state === 'pending' && longest.at - created).toBe(Math.round(8 * HOUR * (1 + 0.999999 / 4)));
    expect(longest.state === 'pending' && longest.at - created <= 10 * HOUR).toBe(true);
  });
  it('a message failing 24 h after it was written becomes dead; a millisecond earlier it is retried', () => {
    expect(RETRY_WINDOW_MS).toBe(24 * HOUR);
    expect(afterFailure(created, 12, created + 24 * HOUR - 1, () => 0)).toEqual({ state: 'pending', at: created + 32 * HOUR - 1 });
    expect(afterFailure(created, 12, created + 24 * HOUR, () => 0)).toEqual({ state: 'dead' });
    expect(afterFailure(created, 1, created + 30 * HOUR, () => 0)).toEqual({ state: 'dead' });
  });
});

describe.each(TEST_DIALECTS)('failed deliveries are retried, then dead letters (%s)', (dialect) => {
  const open = useTestApps(dialect);
  const receivers: Receiver[] = [];
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  });

  async function setUp(answer: Answer) {
    const receiver = await startReceiver(answer);
    receivers.push(receiver);
    const t = await open(LOOPBACK_ENV);
    const { id } = await addWebhook(t.services, { url: receiver.url });
    return { t, receiver, webhookId: id };
  }
  const notify = (t: TestApp, detail: string) => recordEvent(t.services.db, t.clock, CLI_CONTEXT, { type: 'keys.revoked', detail });
  /** Moves the clock to at least `at`, by whole seconds. */
  const advanceTo = (t: TestApp, at: number) => t.clock.advance(Math.max(0, Math.ceil((at - t.clock.now()) / 1000)));

  it('retries with growing delays until 24 h after the message was written, then it is dead; nothing is sent early', async () => {
    const { t, receiver } = await setUp(() => 503);
    await notify(t, 'key k1 revoked');
    const counts = new OutboxCounts();
    const [{ id, created_at: createdAt } = { id: '', created_at: 0 }] = await outboxRows(t.services.db);
    for (let round = 1; round < 30; round++) {
      expect(await deliver(t.services, channelsOf(t.config), counts)).toBe(1);
      const [message] = await outboxRows(t.services.db);
      expect(message?.attempts).toBe(round);
      if (message?.state !== 'pending') break;
      expect(t.clock.now() - createdAt).toBeLessThan(RETRY_WINDOW_MS);
      t.clock.advance(Math.ceil((message.next_attempt_at - t.clock.now()) / 1000) - 1);
      expect(await deliver(t.services, channelsOf(t.config), counts)).toBe(0);
      advanceTo(t, message.next_attempt_at);
    }

    const [dead] = await outboxRows(t.services.db);
    const attempts = await attemptsOf(t.services.db, id);
    expect(dead).toMatchObject({ state: 'dead', last_error: 'HTTP 503: receiver says 503', finished_at: t.clock.now() });
    expect(attempts.length).toBeGreaterThanOrEqual(10);
    expect(attempts.every((attempt) => attempt.ok === 0 && attempt.status === 503)).toBe(true);
    expect(attempts.at(-1)!.at - createdAt).toBeGreaterThanOrEqual(RETRY_WINDOW_MS);
    expect(attempts.at(-2)!.at - createdAt).toBeLessThan(RETRY_WINDOW_MS);
    // Each wait was its base delay stretched by at most a quarter (and a whole-second step of the test clock).
    attempts.slice(1).forEach((attempt, index) => {
      const waited = attempt.at - attempts[index]!.at;
      const base = BASE_DELAYS[Math.min(index, BASE_DELAYS.length - 1)]!;
      expect(waited).toBeGreaterThanOrEqual(base);
      expect(waited).toBeLessThanOrEqual(base * 1.25 + 1000);
    });
    expect(receiver.received).toHaveLength(attempts.length);
    expect(new Set(receiver.received.map((delivery) => delivery.headers['webhook-id']))).toEqual(new Set([id]));
    expect(counts.entries()).toEqual(
      expect.arrayContaining([
        { channel: 'webhook', outcome: 'failed', value: attempts.length - 1 },
        { channel: 'webhook', outcome: 'dead', value: 1 },
      ]),
    );

    // A dead letter is never sent again by itself.
    t.clock.advance(48 * 3600);
    expect(await deliver(t.services, channelsOf(t.config))).toBe(0);
    expect(receiver.received).toHaveLength(attempts.length);
  });

  it("a removed webhook's waiting messages become dead at their next attempt, and nothing more is sent", async () => {
    const { t, receiver, webhookId } = await setUp(() => 500);
    await notify(t, 'first');
    t.clock.advance(1);
    await notify(t, 'second');
    expect(await deliver(t.services, channelsOf(t.config))).toBe(2);
    expect(receiver.received).toHaveLength(2);
    await removeWebhook(t.services, webhookId);
    await notify(t, 'after the removal');
    expect((await outboxRows(t.services.db)).map((row) => row.state)).toEqual(['pending', 'pending']);

    t.clock.advance(600);
    expect(await deliver(t.services, channelsOf(t.config))).toBe(2);
    const rows = await outboxRows(t.services.db);
    expect(rows.map((row) => [row.state, row.attempts, row.last_error])).toEqual([
      ['dead', 2, 'the webhook was removed'],
      ['dead', 2, 'the webhook was removed'],
    ]);
    expect(receiver.received).toHaveLength(2);
  });

  it('two instances delivering at once send each message exactly once', async () => {
    const { t, receiver } = await setUp(() => 200);
    for (let n = 0; n < 12; n++) await notify(t, `key ${n} revoked`);
    const channels = channelsOf(t.config);
    const counts = [new OutboxCounts(), new OutboxCounts()];
    await Promise.all([deliverRound(t.services, channels, counts[0]!, 'instance-a'), deliverRound(t.services, channels, counts[1]!, 'instance-b')]);
    const ids = receiver.received.map((delivery) => delivery.headers['webhook-id']);
    expect(ids).toHaveLength(12);
    expect(new Set(ids).size).toBe(12);
    expect((await outboxRows(t.services.db)).every((row) => row.state === 'delivered' && row.attempts === 1)).toBe(true);
    const delivered = counts.flatMap((count) => count.entries()).reduce((sum, entry) => sum + entry.value, 0);
    expect(delivered).toBe(12);
  });
});
