import type { Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { SessionsTable } from '../schema/sessions.js';
import { prepareQuery } from '../prepared.js';
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

const selectSessionStatus = prepareQuery((db: Db, sessionId: string) =>
  db
    .selectFrom('sessions')
    .innerJoin('admins', 'admins.id', 'sessions.admin_id')
    .innerJoin('schools', 'schools.key', 'admins.school_key')
    .select([
      'sessions.revoked_at',
      'sessions.expires_at',
      'sessions.last_used_at',
      'admins.disabled_at',
      'schools.suspended_at',
    ])
    .where('sessions.id', '=', sessionId),
);

/** What /admin/auth/me needs to decide whether a token's session is still alive. */
export async function findSessionStatus(db: Db, sessionId: string) {
  return (await selectSessionStatus(db, sessionId)).rows[0];
}

/** Ends one session; returns false when it was already ended or does not exist. */
export async function revokeSession(db: Db, sessionId: string, reason: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('sessions')
    .set({ revoked_at: now, revoke_reason: reason })
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Ends every live session of an admin; returns how many were ended. */
export async function revokeAdminSessions(db: Db, adminId: string, reason: string, now: number): Promise<number> {
  const result = await db
    .updateTable('sessions')
    .set({ revoked_at: now, revoke_reason: reason })
    .where('admin_id', '=', adminId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Ends every live session of every admin of a school. */
export async function revokeSchoolSessions(db: Db, schoolKey: string, reason: string, now: number): Promise<number> {
  const result = await db
    .updateTable('sessions')
    .set({ revoked_at: now, revoke_reason: reason })
    .where('admin_id', 'in', db.selectFrom('admins').select('id').where('school_key', '=', schoolKey))
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export const updateLastUsed = prepareQuery((db: Db, sessionId: string, now: number) =>
  db.updateTable('sessions').set({ last_used_at: now }).where('id', '=', sessionId),
);

/** Moves a session's idle clock. */
export async function touchSession(db: Db, sessionId: string, now: number): Promise<void> {
  await updateLastUsed(db, sessionId, now);
}

export function listSessions(db: Db, filter: { schoolKey: string; usernameKey?: string }) {
  let query = db
    .selectFrom('sessions')
    .innerJoin('admins', 'admins.id', 'sessions.admin_id')
    .innerJoin('schools', 'schools.key', 'admins.school_key')
    .selectAll('sessions')
    .select(['admins.username', 'schools.school_id'])
    .where('admins.school_key', '=', filter.schoolKey)
    .orderBy('sessions.created_at', 'desc')
    .orderBy('sessions.id');
  if (filter.usernameKey !== undefined) query = query.where('admins.username_key', '=', filter.usernameKey);
  return query.execute();
}

export function findSession(db: Db, sessionId: string) {
  return db
    .selectFrom('sessions')
    .innerJoin('admins', 'admins.id', 'sessions.admin_id')
    .innerJoin('schools', 'schools.key', 'admins.school_key')
    .select(['sessions.id', 'sessions.admin_id', 'sessions.revoked_at', 'admins.username', 'admins.school_key', 'schools.school_id'])
    .where('sessions.id', '=', sessionId)
    .executeTakeFirst();
}
