import { Gauge, type Registry } from 'prom-client';
import { scheduleKeys } from '../../auth/keys/key-schedule.js';
import type { Database } from '../../db/database.js';
import { earliestUnsealedAt } from '../../db/queries/audit-sealing.js';
import { listSigningKeys } from '../../db/queries/signing-keys.js';
import { nowSeconds, type Clock } from '../../runtime/clock.js';

/**
 * How old the two things are that an operator must keep young: the key that signs now (rotated on
 * a schedule, docs/keys.md) and the oldest audit event the sealer has not sealed yet. Both are read
 * from the shared database at each scrape, so every instance reports the same figures.
 */
export function registerAgeGauges(registry: Registry, sources: { readonly database: Database; readonly clock: Clock }): void {
  new Gauge({
    name: 'school_auth_signing_key_age_seconds',
    help: 'Seconds since the signing key that signs now was created; `school-auth keys rotate` starts a new one',
    registers: [registry],
    async collect() {
      // While the database is down the last figure stands: /metrics still answers.
      const rows = await listSigningKeys(sources.database.db).catch(() => undefined);
      if (rows === undefined) return;
      const now = nowSeconds(sources.clock);
      // Which key signs does not depend on how long superseded keys stay published: 0 will do.
      const active = scheduleKeys(rows, now, 0).find(({ state }) => state === 'active');
      if (active !== undefined) this.set(Math.max(0, now - active.row.created_at));
    },
  });
  new Gauge({
    name: 'school_auth_audit_unsealed_oldest_seconds',
    help: 'Seconds since the oldest audit event not yet sealed into the chain was written; 0 when every event is sealed',
    registers: [registry],
    async collect() {
      // null: the database did not answer, and the last figure stands; undefined: all are sealed.
      const at = await earliestUnsealedAt(sources.database.db).catch(() => null);
      if (at === null) return;
      // Event times are milliseconds; an event from a clock a little ahead never reads negative.
      this.set(at === undefined ? 0 : Math.max(0, (sources.clock.now() - at) / 1000));
    },
  });
}
