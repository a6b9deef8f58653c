import { describe, expect, it } from 'vitest';
import { CLI_CONTEXT, recordEvent } from '../../../src/auth/events.js';
import { sealBatch } from '../../../src/auth/audit/sealer.js';
import type { Db } from '../../../src/db/database.js';
import { useTestApps } from '../../helpers/app.js';
import { quietMinutes, recordEvents, sealAll, verdict, withEmptyTrail } from '../../helpers/audit.js';
import { TEST_DIALECTS } from '../../helpers/database.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** A row written straight into `events`, as someone with database access alone would. */
async function forge(db: Db, at: number): Promise<void> {
  await db.insertInto('events').values({ at, type: 'login.success', username: 'mallory' }).execute();
}

/** Forgeries timed around quiet stretches, restarts and a sealer held back. */
describe.each(TEST_DIALECTS)('events verify in quiet hours on %s', (dialect) => {
  const open = useTestApps(dialect);

  /** A sealer running since `since`; five events sealed at `sealedAt` (checkpoint seq 5), then ten quiet minutes. */
  async function quietTrail() {
    const t = await withEmptyTrail(await open());
    const since = t.clock.now();
    await recordEvents(t.services, 5, (s) => t.clock.advance(s));
    await sealAll(t.services);
    const sealedAt = t.clock.now();
    await quietMinutes(t, 10, since);
    expect(await verdict(t.services.db)).toBe('ok');
    return { t, db: t.services.db, since, sealedAt };
  }

  it('a row inserted after a quiet stretch, dated a little before the last batch was sealed', async () => {
    const { t, db, since, sealedAt } = await quietTrail();
    await forge(db, sealedAt - 5_000);
    expect(await verdict(db)).toMatch(/^event id \d+ \(login\.success at \S+\) was inserted afterwards: checkpoint seq 5 promised every event before \S+ sealed already$/);
    await sealBatch(t.services, { runningSince: since });
    expect(await verdict(db)).toMatch(/^event seq 6 \(id \d+, login\.success at \S+\) was inserted afterwards: checkpoint seq 5 promised/);

    const honest = await quietTrail();
    await recordEvents(honest.t.services, 1, () => undefined);
    await sealBatch(honest.t.services, { runningSince: honest.since });
    expect(await verdict(honest.db)).toBe('ok');
  });

  it('a row dated in the future, once sealed; a clock a little ahead is allowed for', async () => {
    const { t, db, since } = await quietTrail();
    await forge(db, t.clock.now() + 3_600_000);
    await sealBatch(t.services, { runningSince: since });
    expect(await verdict(db)).toBe(
      `event seq 6 (id ${(await db.selectFrom('events').select('id').where('seq', '=', 6).executeTakeFirstOrThrow()).id}, login.success at ${iso(t.clock.now() + 3_600_000)}) ` +
        `is dated after checkpoint seq 6 sealed it at ${iso(t.clock.now())}: inserted with a time to come`,
    );

    const skewed = await quietTrail();
    await forge(skewed.db, skewed.t.clock.now() + 30_000);
    await sealBatch(skewed.t.services, { runningSince: skewed.since });
    expect(await verdict(skewed.db)).toBe('ok');
  });

  it('a row inserted while the service is down, dated before its last promise, is named before and after the restart', async () => {
    const { t, db, sealedAt } = await quietTrail();
    const lastRound = sealedAt + 600_000;
    t.clock.advance(2 * 3600);
    await forge(db, lastRound - 90_000);
    await recordEvent(db, t.clock, CLI_CONTEXT, { type: 'admin.created', username: 'carol', detail: 'while the service was down' });
    expect(await verdict(db)).toMatch(new RegExp(`^event id \\d+ \\(login\\.success at \\S+\\) was inserted afterwards: checkpoint seq 5 promised every event before ${iso(lastRound - 60_000)}`));
    await sealBatch(t.services, { runningSince: t.clock.now() });
    expect(await verdict(db)).toMatch(/^event seq 6 \(id \d+, login\.success at \S+\) was inserted afterwards/);

    // The same downtime without the forgery: the gap while nothing ran is not named.
    const honest = await quietTrail();
    honest.t.clock.advance(2 * 3600);
    await recordEvent(honest.db, honest.t.clock, CLI_CONTEXT, { type: 'admin.created', username: 'carol', detail: 'while the service was down' });
    await sealBatch(honest.t.services, { runningSince: honest.t.clock.now() });
    expect(await verdict(honest.db)).toBe('ok');
  });

  it('a gap in checkpoints while the service ran, after which events were sealed', async () => {
    const { t, db, since, sealedAt } = await quietTrail();
    // The sealer is held back ten minutes (its row locked, say); a row dated in that stretch goes in.
    t.clock.advance(600);
    await forge(db, t.clock.now() - 300_000);
    await sealBatch(t.services, { runningSince: since });
    expect(await verdict(db)).toBe(
      `no checkpoint from ${iso(sealedAt + 600_000)} to ${iso(t.clock.now())} while the service ran: ` +
        'the events checkpoint seq 6 sealed after it could have been inserted during it',
    );

    // A gap nothing was written in hides nothing: the checkpoint ending it promises the whole stretch.
    const idle = await quietTrail();
    idle.t.clock.advance(600);
    await sealBatch(idle.t.services, { runningSince: idle.since });
    await recordEvents(idle.t.services, 1, () => undefined);
    await sealBatch(idle.t.services, { runningSince: idle.since });
    expect(await verdict(idle.db)).toBe('ok');
  });
});
