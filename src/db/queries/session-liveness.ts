import { sql, type Selectable } from 'kysely';
import type { Config } from '../../config/config.js';
import type { AdminsTable } from '../schema/admins.js';
import type { SchoolsTable } from '../schema/schools.js';
import type { SessionsTable } from '../schema/sessions.js';

/**
 * When a session may still be used, stated twice, side by side: once over a row that was read
 * (isSessionAlive, which decides every answer) and once as SQL (sessionAliveSql, which decides
 * which token a PostgreSQL rotation consumes in the same statement that reads it).
 * test/db/session-liveness.test.ts holds the two equal on every edge, on both databases.
 */

/** The columns that decide whether a session is alive, as a select list over SESSIONS_WITH_OWNER. */
export const LIVENESS_SQL = sql`sessions.revoked_at, sessions.expires_at, sessions.last_used_at, sessions.credential_epoch,
  admins.credential_epoch as admin_credential_epoch, admins.disabled_at, schools.suspended_at`;

/** What LIVENESS_SQL reads. */
export type SessionLiveness = Pick<Selectable<SessionsTable>, 'revoked_at' | 'expires_at' | 'last_used_at' | 'credential_epoch'> &
  Pick<Selectable<AdminsTable>, 'disabled_at'> &
  Pick<Selectable<SchoolsTable>, 'suspended_at'> & { admin_credential_epoch: Selectable<AdminsTable>['credential_epoch'] };

/** Whether a session, as LIVENESS_SQL read it, may still be used at `now`. */
export function isSessionAlive(session: SessionLiveness, now: number, config: Pick<Config, 'refreshIdleTimeout'>): boolean {
  if (session.revoked_at !== null) return false;
  // Moved on by every operator action that ends all of an admin's sessions (see migration 005).
  if (session.credential_epoch !== session.admin_credential_epoch) return false;
  if (now >= session.expires_at) return false;
  if (now - session.last_used_at > config.refreshIdleTimeout) return false;
  if (session.disabled_at !== null || session.suspended_at !== null) return false;
  return true;
}

/** isSessionAlive as a condition over SESSIONS_WITH_OWNER; `idleFloor` is now minus the idle timeout. */
export function sessionAliveSql(now: number, idleFloor: number) {
  return sql`sessions.revoked_at is null and sessions.credential_epoch = admins.credential_epoch and sessions.expires_at > ${now}
    and sessions.last_used_at >= ${idleFloor} and admins.disabled_at is null and schools.suspended_at is null`;
}
