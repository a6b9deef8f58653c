import { setTimeout as realSleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HEARTBEAT_MS, WRITE_SETTLE_MS } from '../../../src/auth/audit/checkpoint-timeline.js';
import { roundMs, startSealer } from '../../../src/auth/audit/sealer-loop.js';
import { sealBatch } from '../../../src/auth/audit/sealer.js';
import { verifyTrail } from '../../../src/auth/audit/verify-trail.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { useTestApps } from '../../helpers/app.js';
import { quietMinutes, recordEvents, sealAll, verdict, withEmptyTrail } from '../../helpers/audit.js';
import { TEST_DIALECTS } from '../../helpers/database.js';

const SIX_HOURS = 6 * 60;

describe('how often the sealer runs', () => {
  it('every AUDIT_SEAL_INTERVAL, but at least once a minute', () => {
    expect(roundMs(5)).toBe(5_000);
    expect(roundMs(60)).toBe(60_000);
    expect(roundMs(3600)).toBe(60_000);
  });
});

describe.each(TEST_DIALECTS)('the heartbeat on %s', (dialect) => {
  const open = useTestApps(dialect);
  afterEach(() => {
    vi.useRealTimers();
  });

  it('six idle hours add no checkpoint row: the newest one is signed again each minute, keeping up with the clock', async () => {
    const t = await withEmptyTrail(await open());
    const { db } = t.services;
    const since = t.clock.now();
    await recordEvents(t.services, 3, (s) => t.clock.advance(s));
    await sealAll(t.services);
    const batchAt = t.clock.now();
    await quietMinutes(t, SIX_HOURS, since);
    const rows = await db.selectFrom('audit_checkpoints').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ seq: 3, sealed_at: t.clock.now(), covers_before: t.clock.now() - WRITE_SETTLE_MS });
    expect(await verifyTrail(db)).toMatchObject({ ok: true, report: { events: 3, checkpoints: 1 } });

    await recordEvents(t.services, 1, () => undefined);
    const next = await sealBatch(t.services, { runningSince: since });
    expect(next).toMatchObject({ seq: 4, previous: 3, previous_at: t.clock.now(), batch_at: t.clock.now(), stalled: null });
    expect(await db.selectFrom('audit_checkpoints').select('seq').orderBy('seq').execute()).toEqual([{ seq: 3 }, { seq: 4 }]);
    const first = await db.selectFrom('audit_checkpoints').select('jws').where('seq', '=', 3).executeTakeFirstOrThrow();
    expect(JSON.parse(Buffer.from(first.jws.split('.')[1] ?? '', 'base64url').toString())).toMatchObject({ batch_at: batchAt, sealed_at: t.clock.now() });
    expect(await verdict(db)).toBe('ok');
  });

  it('is due when the next round would leave the newest checkpoint older than a minute', async () => {
    const t = await withEmptyTrail(await open());
    await recordEvents(t.services, 1, (s) => t.clock.advance(s));
    await sealAll(t.services);
    t.clock.advance(54);
    expect(await sealBatch(t.services, { nextRoundMs: 5_000 })).toBeUndefined();
    t.clock.advance(1);
    expect(await sealBatch(t.services, { nextRoundMs: 5_000 })).toMatchObject({ seq: 1, events: 0, sealed_at: t.clock.now() });
    expect(await sealBatch(t.services, { nextRoundMs: 5_000 })).toBeUndefined();
    expect(await sealBatch(t.services, { nextRoundMs: HEARTBEAT_MS })).toMatchObject({ seq: 1, events: 0 });
  });

  it('never signs again a newest checkpoint whose row does not hold', async () => {
    const t = await withEmptyTrail(await open());
    const { db } = t.services;
    await recordEvents(t.services, 2, (s) => t.clock.advance(s));
    await sealAll(t.services);
    await sql`update audit_checkpoints set covers_before = covers_before + 1 where seq = 2`.execute(db);
    t.clock.advance(120);
    expect(await sealBatch(t.services)).toBeUndefined();
    expect(await verdict(db)).toBe('checkpoint seq 2 was edited: its row differs from what its signature covers');
  });

  it('comes each minute from the loop even with AUDIT_SEAL_INTERVAL at an hour, and stopping signs a last checkpoint', async () => {
    const t = await withEmptyTrail(await open());
    const lines: { events: number; audit_checkpoint: { seq: number; sealed_at: number } }[] = [];
    const logger = createLogger('warn', { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) });
    await recordEvents(t.services, 2, (s) => t.clock.advance(s));
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const loop = startSealer({ ...t.services, logger }, 3600);
    t.clock.advance(60);
    // The round the timer starts is awaited by stop(), which then signs once more.
    await vi.advanceTimersByTimeAsync(60_000);
    await loop.stop();
    expect(lines.map((line) => [line.events, line.audit_checkpoint.seq, line.audit_checkpoint.sealed_at])).toEqual([
      [2, 2, t.clock.now()],
      [0, 2, t.clock.now()],
    ]);
    expect(await verdict(t.services.db)).toBe('ok');
  });

  it('sleeps while idle: a round AUDIT_SEAL_INTERVAL after an event this process records, otherwise one a minute', async () => {
    const t = await withEmptyTrail(await open());
    const lines: { events: number; audit_checkpoint: { seq: number } }[] = [];
    const logger = createLogger('warn', { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const loop = startSealer({ ...t.services, logger }, 5);
    // A round runs on the real database: wait, in real time, for the lines it logs.
    const logged = async (count: number) => {
      for (const deadline = Date.now() + 5_000; lines.length < count && Date.now() < deadline; ) await realSleep(10);
      return lines.map((line) => [line.events, line.audit_checkpoint.seq]);
    };
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await logged(1)).toEqual([]);
    await recordEvents(t.services, 2, (s) => t.clock.advance(s));
    await vi.advanceTimersByTimeAsync(4_999);
    expect(lines).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(await logged(1)).toEqual([[2, 2]]);
    // Nothing recorded since: no round until the heartbeat's minute.
    t.clock.advance(60);
    await vi.advanceTimersByTimeAsync(59_999);
    expect(await logged(2)).toEqual([[2, 2]]);
    await vi.advanceTimersByTimeAsync(1);
    expect(await logged(2)).toEqual([
      [2, 2],
      [0, 2],
    ]);
    await loop.stop();
    expect(await verdict(t.services.db)).toBe('ok');
  });
});
