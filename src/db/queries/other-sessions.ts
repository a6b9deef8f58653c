import { sql } from 'kysely';
import type { Db } from '../database.js';
import { SESSIONS_WITH_OWNER, type Session } from './sessions.js';
import { LIVENESS_SQL, type SessionLiveness } from './session-liveness.js';

/** An admin's sessions not revoked yet, newest first, with what decides whether each is alive. */
export async function listUnrevokedSessionsOfAdmin(db: Db, adminId: string) {
  const { rows } = await sql<Pick<Session, 'id' | 'created_at' | 'ip' | 'user_agent' | 'acr' | 'amr'> & SessionLiveness>`select sessions.id,
    sessions.created_at, sessions.ip, sessions.user_agent, sessions.acr, sessions.amr, ${LIVENESS_SQL} from ${SESSIONS_WITH_OWNER}
    where sessions.admin_id = ${adminId} and sessions.revoked_at is null order by sessions.created_at desc, sessions.id`.execute(db);
  return rows;
}

/**
 * Moves an admin's credential epoch on (and sets a new password hash with it, when given) only if
 * `keepSessionId` is still unrevoked and at the admin's current epoch, decided by one conditional
 * UPDATE: of two concurrent requests from two sessions, the second finds its own session ended by
 * the first and changes nothing. Answers the new epoch, or undefined.
 */
export async function moveEpochKeeping(db: Db, adminId: string, keepSessionId: string, password?: { hash: string; now: number }): Promise<number | undefined> {
  const moved = await db
    .updateTable('admins')
    .set({
      credential_epoch: sql<number>`credential_epoch + 1`,
      ...(password === undefined ? {} : { password_hash: password.hash, password_changed_at: password.now }),
    })
    .where('id', '=', adminId)
    .where((eb) =>
      eb(
        'credential_epoch',
        '=',
        eb.selectFrom('sessions').select('sessions.credential_epoch').where('sessions.id', '=', keepSessionId).where('sessions.admin_id', '=', adminId).where('sessions.revoked_at', 'is', null),
      ),
    )
    .returning('credential_epoch')
    .executeTakeFirst();
  return moved?.credential_epoch;
}

/** Re-stamps the kept session at the epoch moveEpochKeeping moved to, so it stays alive. */
export async function restampSession(db: Db, sessionId: string, epoch: number): Promise<void> {
  await db.updateTable('sessions').set({ credential_epoch: epoch }).where('id', '=', sessionId).where('credential_epoch', '=', epoch - 1).execute();
}
