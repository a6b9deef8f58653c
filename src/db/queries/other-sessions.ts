import { sql } from 'kysely';
import { inTransaction, type Db } from '../database.js';
import { SESSIONS_WITH_OWNER, type Session } from './sessions.js';
import { LIVENESS_SQL, type SessionLiveness } from './session-liveness.js';
import { revokeSessions } from './session-ending.js';

/** An admin's sessions not revoked yet, newest first, with what decides whether each is alive. */
export async function listUnrevokedSessionsOfAdmin(db: Db, adminId: string) {
  const { rows } = await sql<Pick<Session, 'id' | 'created_at' | 'ip' | 'user_agent' | 'acr' | 'amr'> & SessionLiveness>`select sessions.id,
    sessions.created_at, sessions.ip, sessions.user_agent, sessions.acr, sessions.amr, ${LIVENESS_SQL} from ${SESSIONS_WITH_OWNER}
    where sessions.admin_id = ${adminId} and sessions.revoked_at is null order by sessions.created_at desc, sessions.id`.execute(db);
  return rows;
}

export interface KeepOneSession {
  readonly adminId: string;
  /** The session that asked: it survives, re-stamped at the new credential epoch. */
  readonly keepSessionId: string;
  readonly reason: string;
  readonly now: number;
  /** Set together with the epoch move: a password change. */
  readonly passwordHash?: string;
}

/**
 * Ends every session of an admin but one, those being created included, in one transaction: the
 * credential epoch moves on (so a login that checked the password before cannot leave a session
 * behind), the others are marked revoked, and the kept session is re-stamped at the new epoch.
 *
 * The epoch moves only if the kept session is still unrevoked and at the admin's current epoch,
 * decided by that one conditional UPDATE: of two concurrent requests from two sessions, the second
 * finds its own session ended by the first and changes nothing. Returns undefined then, else the
 * sessions it ended.
 */
export function endOtherSessions(db: Db, request: KeepOneSession): Promise<{ id: string }[] | undefined> {
  return inTransaction(db, async (trx) => {
    const moved = await trx
      .updateTable('admins')
      .set({
        credential_epoch: sql<number>`credential_epoch + 1`,
        ...(request.passwordHash === undefined ? {} : { password_hash: request.passwordHash, password_changed_at: request.now }),
      })
      .where('id', '=', request.adminId)
      .where((eb) =>
        eb(
          'credential_epoch',
          '=',
          eb
            .selectFrom('sessions')
            .select('sessions.credential_epoch')
            .where('sessions.id', '=', request.keepSessionId)
            .where('sessions.admin_id', '=', request.adminId)
            .where('sessions.revoked_at', 'is', null),
        ),
      )
      .returning('credential_epoch')
      .executeTakeFirst();
    if (moved === undefined) return undefined;
    const ended = await revokeSessions(trx, { adminId: request.adminId, exceptSessionId: request.keepSessionId }, request.reason, request.now);
    await trx
      .updateTable('sessions')
      .set({ credential_epoch: moved.credential_epoch })
      .where('id', '=', request.keepSessionId)
      .where('credential_epoch', '=', moved.credential_epoch - 1)
      .execute();
    return ended;
  });
}
