import { CLI_CONTEXT, recordEvent, type EventType } from '../../src/auth/audit/events.js';
import { sealBatch } from '../../src/auth/audit/sealer.js';
import type { AppContext } from '../../src/auth/context.js';

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

export { CLI_CONTEXT };

/**
 * Starts a test app's audit trail empty: opening the services created its signing key, which is
 * itself an event (keys.created); these tests count only the events they record.
 */
export async function withEmptyTrail<T extends { services: Pick<AppContext, 'db'> }>(app: T): Promise<T> {
  await app.services.db.deleteFrom('events').execute();
  return app;
}
