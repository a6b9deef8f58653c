import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { prune } from '../../../src/auth/housekeeping.js';
import { verifyTrail } from '../../../src/auth/audit/verify-trail.js';
import { useTestApps } from '../../helpers/app.js';
import { quietMinutes, recordEvents, sealAll, verdict, withEmptyTrail } from '../../helpers/audit.js';
import { TEST_DIALECTS } from '../../helpers/database.js';

const DAY = 86_400;

describe.each(TEST_DIALECTS)('prune and the audit chain on %s', (dialect) => {
  const open = useTestApps(dialect);

  /** Four events sealed ten days ago (checkpoint at seq 4), three sealed a day ago (checkpoint at seq 7). */
  async function agedTrail() {
    const t = await withEmptyTrail(await open());
    await recordEvents(t.services, 4, (s) => t.clock.advance(s));
    await sealAll(t.services);
    t.clock.advance(9 * DAY);
    await recordEvents(t.services, 3, (s) => t.clock.advance(s));
    await sealAll(t.services);
    t.clock.advance(DAY);
    return t;
  }

  it('removes events only up to a checkpoint, which then anchors the chain', async () => {
    const t = await agedTrail();
    const { db } = t.services;
    // Events older than 12 days: none was sealed by a checkpoint that old.
    expect((await prune(t.services, { sessionDays: 7, eventDays: 12 })).events).toBe(0);
    // Older than 5 days: the first four, up to checkpoint seq 4.
    expect((await prune(t.services, { sessionDays: 7, eventDays: 5 })).events).toBe(4);
    expect((await prune(t.services, { sessionDays: 7, eventDays: 5 })).events).toBe(0);
    const left = await db.selectFrom('events').select(['seq', 'type']).orderBy('id').execute();
    expect(left).toEqual([{ seq: 5, type: 'admin.created' }, { seq: 6, type: 'admin.created' }, { seq: 7, type: 'admin.created' }, { seq: null, type: 'events.pruned' }]);
    expect(await verifyTrail(db)).toMatchObject({ ok: true, report: { events: 3, checkpoints: 2, prunedThrough: 4 } });
    await sealAll(t.services);
    expect(await verifyTrail(db)).toMatchObject({ ok: true, report: { events: 4, checkpoints: 3, prunedThrough: 4 } });
  });

  it('keeps the chain anchored when the checkpoints were signed again in quiet hours, and still names a forgery', async () => {
    const t = await withEmptyTrail(await open());
    const { db } = t.services;
    // Two stretches of the service running, each ending in ten quiet minutes, nine days apart.
    await recordEvents(t.services, 4, (s) => t.clock.advance(s));
    await sealAll(t.services);
    await quietMinutes(t, 10, t.clock.now());
    t.clock.advance(9 * DAY);
    const restarted = t.clock.now();
    await recordEvents(t.services, 3, (s) => t.clock.advance(s));
    await sealAll(t.services);
    await quietMinutes(t, 10, restarted);
    t.clock.advance(DAY);
    const running = t.clock.now();
    expect((await prune(t.services, { sessionDays: 7, eventDays: 5 })).events).toBe(4);
    await quietMinutes(t, 10, running);
    expect(await verifyTrail(db)).toMatchObject({ ok: true, report: { events: 4, checkpoints: 3, prunedThrough: 4 } });
    await sql`insert into events (at, type, username) values (${t.clock.now() - 5 * 60_000}, 'login.success', 'mallory')`.execute(db);
    await quietMinutes(t, 1, running);
    expect(await verdict(db)).toMatch(/^event seq 9 \(id \d+, login\.success at \S+\) was inserted afterwards: checkpoint seq 8 promised/);
  });

  it('still catches tampering after a prune', async () => {
    const t = await agedTrail();
    const { db } = t.services;
    await prune(t.services, { sessionDays: 7, eventDays: 5 });
    await sql`update events set detail = 'nothing happened' where seq = 5`.execute(db);
    expect(await verifyTrail(db)).toMatchObject({ ok: false, problem: expect.stringMatching(/^event seq 5 .* was edited/) as unknown });

    const other = await agedTrail();
    await prune(other.services, { sessionDays: 7, eventDays: 5 });
    await sql`delete from events where seq = 5`.execute(other.services.db);
    expect(await verifyTrail(other.services.db)).toMatchObject({ ok: false, problem: 'event seq 5 was deleted (the chain jumps to seq 6)' });

    const anchored = await agedTrail();
    await prune(anchored.services, { sessionDays: 7, eventDays: 5 });
    await sql`delete from audit_checkpoints where seq = 4`.execute(anchored.services.db);
    expect(await verifyTrail(anchored.services.db)).toMatchObject({ ok: false, problem: 'checkpoint seq 4, where prune cut the chain, is missing' });
  });
});
