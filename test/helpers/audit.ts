import { CLI_CONTEXT, recordEvent, type EventType } from '../../src/auth/events.js';
import { sealBatch } from '../../src/auth/audit/sealer.js';
import { verifyTrail } from '../../src/auth/audit/verify-trail.js';
import type { AppContext } from '../../src/auth/context.js';
import type { Db } from '../../src/db/database.js';
import type { TestClock } from './clock.js';

/** Records `n` events through the same code as the service, one clock second apart. */
export async function recordEvents(services: AppContext, n: number, advance: (seconds: number) => void, type: EventType = 'admin.created'): Promise<void> {
  for (let i = 0; i < n; i += 1) {
    await recordEvent(services.db, services.clock, { ip: '192.0.2.1', userAgent: 'test' }, { type, schoolId: 'lincoln-high', username: `user${i}`, detail: `event ${i}` });
    advance(1);
  }
}

/** Seals everything waiting; returns how many checkpoints that made. */
export async function sealAll(services: Pick<AppContext, 'db' | 'clock' | 'keys'>, limit?: number): Promise<number> {
  let checkpoints = 0;
  while ((await sealBatch(services, { limit })) !== undefined) checkpoints += 1;
  return checkpoints;
}

/**
 * A minute at a time for `minutes` minutes, one sealer round at the end of each, as `serve` runs
 * it when nothing else happens; `runningSince` is when that sealer started.
 */
export async function quietMinutes(t: { services: Pick<AppContext, 'db' | 'clock' | 'keys'>; clock: TestClock }, minutes: number, runningSince: number): Promise<void> {
  for (let minute = 0; minute < minutes; minute += 1) {
    t.clock.advance(60);
    await sealBatch(t.services, { runningSince });
  }
}

/** The problem `events verify` reports, or 'ok'. */
export async function verdict(db: Db, againstFile?: string): Promise<string> {
  const result = await verifyTrail(db, againstFile);
  return result.ok ? 'ok' : result.problem;
}

export { CLI_CONTEXT };

/**
 * Starts a test app's audit trail empty: opening the services created its signing key, which is
 * itself an event (keys.created); these tests count only the events they record.
 */
export async function withEmptyTrail<T extends { services: Pick<AppContext, 'db'> }>(app: T): Promise<T> {
  await app.services.db.deleteFrom('events').execute();
  return app;
}
