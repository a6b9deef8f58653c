import type { Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { SessionsTable } from '../schema/sessions.js';
import { storableText } from '../text.js';

export type Session = Selectable<SessionsTable>;

/** Creates a session and its first refresh token. Call it inside a transaction: both or neither. */
export async function insertSession(db: Db, session: Session, tokenHash: string): Promise<void> {
  await db.insertInto('sessions').values({ ...session, user_agent: storableText(session.user_agent) }).execute();
  await db
    .insertInto('refresh_tokens')
    .values({ token_hash: tokenHash, session_id: session.id, created_at: session.created_at, consumed_at: null, successor_sealed: null })
    .execute();
}

/**
 * Sessions with their admin and school: the one join that says who owns a session and whether
 * it may still be used (see isSessionAlive in auth/).
 */
export function selectSessionsWithOwner(db: Db) {
  return db
    .selectFrom('sessions')
    .innerJoin('admins', 'admins.id', 'sessions.admin_id')
    .innerJoin('schools', 'schools.key', 'admins.school_key');
}

/** The columns that decide whether a session is alive. */
export const LIVENESS_COLUMNS = ['sessions.revoked_at', 'sessions.expires_at', 'sessions.last_used_at', 'admins.disabled_at', 'schools.suspended_at'] as const;

/** What /admin/auth/me needs to decide whether a token's session is still alive. */
export function findSessionStatus(db: Db, sessionId: string) {
  return selectSessionsWithOwner(db).select(LIVENESS_COLUMNS).where('sessions.id', '=', sessionId).executeTakeFirst();
}

/** Which sessions a revocation ends: one, one admin's, one school's, or the one a refresh token belongs to. */
export type RevokeScope = { sessionId: string } | { adminId: string } | { schoolKey: string } | { refreshTokenHash: string };

/** Ends every live session in `scope` in one statement; returns the sessions it ended. */
export function revokeSessions(db: Db, scope: RevokeScope, reason: string, now: number): Promise<{ id: string; admin_id: string }[]> {
  return db
    .updateTable('sessions')
    .set({ revoked_at: now, revoke_reason: reason })
    .where((eb) => {
      if ('sessionId' in scope) return eb('id', '=', scope.sessionId);
      if ('adminId' in scope) return eb('admin_id', '=', scope.adminId);
      if ('schoolKey' in scope) return eb('admin_id', 'in', eb.selectFrom('admins').select('id').where('school_key', '=', scope.schoolKey));
      return eb('id', '=', eb.selectFrom('refresh_tokens').select('session_id').where('token_hash', '=', scope.refreshTokenHash));
    })
    .where('revoked_at', 'is', null)
    .returning(['id', 'admin_id'])
    .execute();
}

/** Moves a session's idle clock. */
export async function touchSession(db: Db, sessionId: string, now: number): Promise<void> {
  await db.updateTable('sessions').set({ last_used_at: now }).where('id', '=', sessionId).execute();
}

export function listSessions(db: Db, filter: { schoolKey: string; usernameKey?: string }) {
  let query = selectSessionsWithOwner(db)
    .selectAll('sessions')
    .select(['admins.username', 'schools.school_id'])
    .where('admins.school_key', '=', filter.schoolKey)
    .orderBy('sessions.created_at', 'desc')
    .orderBy('sessions.id');
  if (filter.usernameKey !== undefined) query = query.where('admins.username_key', '=', filter.usernameKey);
  return query.execute();
}

export function findSession(db: Db, sessionId: string) {
  return selectSessionsWithOwner(db)
    .select(['sessions.id', 'sessions.admin_id', 'sessions.revoked_at', 'admins.username', 'admins.school_key', 'schools.school_id'])
    .where('sessions.id', '=', sessionId)
    .executeTakeFirst();
}
