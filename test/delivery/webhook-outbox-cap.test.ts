import { describe, expect, it } from 'vitest';
import { CLI_CONTEXT, recordEvent } from '../../src/auth/events.js';
import { OUTBOX_CAP } from '../../src/auth/notifications.js';
import { countPending, insertMessages, type NewOutboxMessage } from '../../src/db/queries/outbox.js';
import { listDeliveries } from '../../src/db/queries/outbox-attempts.js';
import { addWebhook } from '../../src/delivery/webhooks.js';
import { useTestApps, type TestApp } from '../helpers/app.js';
import { TEST_DIALECTS } from '../helpers/database.js';
import { outboxRows } from './webhook-receiver.js';

const BATCH = 500;

/** `count` pending webhook messages written straight into the outbox, the oldest first, 1 ms apart, before now. */
async function fillOutbox(t: TestApp, webhookId: string, count: number): Promise<void> {
  const start = t.clock.now() - count - 1000;
  for (let first = 0; first < count; first += BATCH) {
    const batch: NewOutboxMessage[] = [];
    for (let n = first; n < Math.min(count, first + BATCH); n++) {
      const at = start + n;
      batch.push({ id: `msg_fill_${String(n).padStart(5, '0')}`, created_at: at, type: 'keys.revoked', channel: 'webhook', target: webhookId, payload: '{}', next_attempt_at: at });
    }
    await insertMessages(t.services.db, batch);
  }
}

const droppedEvents = (t: TestApp) =>
  t.services.db.selectFrom('events').select(['detail', 'at']).where('type', '=', 'outbox.dropped').orderBy('id').execute();

describe.each(TEST_DIALECTS)('the outbox holds at most OUTBOX_CAP waiting messages (%s)', (dialect) => {
  const open = useTestApps(dialect);

  it('an event at the cap drops the oldest waiting messages, records outbox.dropped, and the pending count stays at the cap', async () => {
    expect(OUTBOX_CAP).toBe(10_000);
    const t = await open({ WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true' });
    // Two webhooks: each event writes two messages.
    const { id: first } = await addWebhook(t.services, { url: 'http://127.0.0.1:9/one' });
    await addWebhook(t.services, { url: 'http://127.0.0.1:9/two' });
    await fillOutbox(t, first, OUTBOX_CAP - 1);
    expect(await countPending(t.services.db)).toBe(OUTBOX_CAP - 1);

    await recordEvent(t.services.db, t.clock, CLI_CONTEXT, { type: 'keys.revoked', detail: 'one over the cap' });
    expect(await countPending(t.services.db)).toBe(OUTBOX_CAP);
    let rows = await outboxRows(t.services.db);
    expect(rows).toHaveLength(OUTBOX_CAP + 1);
    expect(rows.filter((row) => row.state === 'dropped').map((row) => row.id)).toEqual(['msg_fill_00000']);
    expect(rows[0]).toMatchObject({ state: 'dropped', last_error: 'dropped: the outbox was full', finished_at: t.clock.now() });
    expect(rows.filter((row) => row.created_at === t.clock.now()).map((row) => [row.type, row.state])).toEqual([
      ['keys.revoked', 'pending'],
      ['keys.revoked', 'pending'],
    ]);
    expect(await droppedEvents(t)).toEqual([{ detail: '1 oldest waiting messages dropped: the outbox holds at most 10000', at: t.clock.now() }]);

    t.clock.advance(1);
    await recordEvent(t.services.db, t.clock, CLI_CONTEXT, { type: 'keys.revoked', detail: 'two more' });
    expect(await countPending(t.services.db)).toBe(OUTBOX_CAP);
    rows = await outboxRows(t.services.db);
    expect(rows.filter((row) => row.state === 'dropped').map((row) => row.id)).toEqual(['msg_fill_00000', 'msg_fill_00001', 'msg_fill_00002']);
    expect((await droppedEvents(t)).map((event) => event.detail)).toEqual([
      '1 oldest waiting messages dropped: the outbox holds at most 10000',
      '2 oldest waiting messages dropped: the outbox holds at most 10000',
    ]);
    // outbox.dropped notifies nobody (else a full outbox would feed itself).
    expect(rows.filter((row) => row.type === 'outbox.dropped')).toEqual([]);
    // Dropped messages are listed among the failed deliveries, where an operator can redeliver them.
    const failed = await listDeliveries(t.services.db, { failedOnly: true, limit: 10 });
    expect(failed.map(({ message }) => message.id).sort()).toEqual(['msg_fill_00000', 'msg_fill_00001', 'msg_fill_00002']);
  });

  it('an event that does not notify never drops anything, however full the outbox', async () => {
    const t = await open({ WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true' });
    const { id } = await addWebhook(t.services, { url: 'http://127.0.0.1:9/one' });
    await fillOutbox(t, id, OUTBOX_CAP);
    await recordEvent(t.services.db, t.clock, CLI_CONTEXT, { type: 'keys.rotated', detail: 'not a notifying event' });
    expect(await countPending(t.services.db)).toBe(OUTBOX_CAP);
    expect(await droppedEvents(t)).toEqual([]);
  });
});
