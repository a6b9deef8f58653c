import { describe, expect, it } from 'vitest';
import { FINISHED_MESSAGE_DAYS, SIGN_IN_ADDRESS_DAYS, prune } from '../../../src/auth/housekeeping.js';
import { useTestApps } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';

const DAY_MS = 86_400_000;

describe.each(TEST_DIALECTS)('prune and the notifications (%s)', (dialect) => {
  const open = useTestApps(dialect);

  it('deletes messages finished over 30 days ago with their attempts, never a waiting one', async () => {
    const t = await open();
    const now = t.clock.now();
    const message = (id: string, state: string, finishedAt: number | null) => ({
      id,
      created_at: now - 40 * DAY_MS,
      type: 'admin.password_changed',
      channel: 'webhook',
      target: 'wh_x',
      payload: '{}',
      state,
      attempts: 1,
      next_attempt_at: now,
      finished_at: finishedAt,
    });
    const old = now - (FINISHED_MESSAGE_DAYS * DAY_MS + 1000);
    await t.services.db
      .insertInto('outbox')
      .values([message('old-delivered', 'delivered', old), message('old-dead', 'dead', old), message('recent-dead', 'dead', now - DAY_MS), message('waiting', 'pending', null)])
      .execute();
    await t.services.db
      .insertInto('outbox_attempts')
      .values(['old-delivered', 'old-dead', 'recent-dead'].map((id) => ({ message_id: id, attempt: 1, at: old, ok: 0, status: 500, error: 'HTTP 500', duration_ms: 3 })))
      .execute();
    expect((await prune(t.services, { sessionDays: 7 })).messages).toBe(2);
    const left = await t.services.db.selectFrom('outbox').select('id').orderBy('id').execute();
    expect(left.map((row) => row.id)).toEqual(['recent-dead', 'waiting']);
    const attempts = await t.services.db.selectFrom('outbox_attempts').select('message_id').execute();
    expect(attempts.map((row) => row.message_id)).toEqual(['recent-dead']);
  });

  it('keeps an address an account signed in from for a year, past THROTTLE_KNOWN_IP_DAYS', async () => {
    const t = await open({ THROTTLE_KNOWN_IP_DAYS: '30' });
    const nowSeconds = Math.floor(t.clock.now() / 1000);
    const day = 86_400;
    await t.services.db
      .insertInto('known_client_ips')
      .values([
        { account: 'a', ip: '203.0.113.1', last_success_at: nowSeconds - 60 * day },
        { account: 'a', ip: '203.0.113.2', last_success_at: nowSeconds - (SIGN_IN_ADDRESS_DAYS * day + 1) },
      ])
      .execute();
    expect((await prune(t.services, { sessionDays: 7 })).clientIps).toBe(1);
    expect((await t.services.db.selectFrom('known_client_ips').select('ip').execute()).map((row) => row.ip)).toEqual(['203.0.113.1']);
  });
});
