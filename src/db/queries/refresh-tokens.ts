import { inTransaction, type Db } from '../database.js';
import { LIVENESS_COLUMNS, selectSessionsWithOwner, touchSession } from './sessions.js';

/** Everything a refresh decides on, read with one query from the token's hash. */
export function findRefreshGrant(db: Db, tokenHash: string) {
  return selectSessionsWithOwner(db)
    .innerJoin('refresh_tokens', 'refresh_tokens.session_id', 'sessions.id')
    .select([
      'refresh_tokens.session_id',
      'refresh_tokens.consumed_at',
      'refresh_tokens.successor_sealed',
      'sessions.admin_id',
      'admins.username',
      'admins.school_key',
      'schools.school_id',
      'sessions.acr',
      'sessions.amr',
      ...LIVENESS_COLUMNS,
    ])
    .where('refresh_tokens.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export type RefreshGrant = NonNullable<Awaited<ReturnType<typeof findRefreshGrant>>>;

export interface Rotation {
  readonly tokenHash: string;
  readonly sessionId: string;
  readonly successorHash: string;
  readonly successorSealed: string;
  readonly now: number;
  /** Also move the session's idle clock (it is written at most once in a while). */
  readonly touchSession: boolean;
}

/**
 * Rotates a refresh token, atomically, inside or outside the caller's transaction. The
 * conditional update decides races in the database: of several concurrent refreshes of one token
 * exactly one consumes it, and none succeeds once the session is revoked. Returns false when this
 * caller lost (the token was already consumed, or its session revoked), having written nothing.
 */
export function rotateRefreshToken(db: Db, rotation: Rotation): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const consumed = await trx
      .updateTable('refresh_tokens')
      .set({ consumed_at: rotation.now, successor_sealed: rotation.successorSealed })
      .where('token_hash', '=', rotation.tokenHash)
      .where('consumed_at', 'is', null)
      .where((eb) =>
        eb.exists(eb.selectFrom('sessions').select('sessions.id').where('sessions.id', '=', rotation.sessionId).where('sessions.revoked_at', 'is', null)),
      )
      .executeTakeFirst();
    if (consumed.numUpdatedRows === 0n) return false;
    await trx
      .insertInto('refresh_tokens')
      .values({ token_hash: rotation.successorHash, session_id: rotation.sessionId, created_at: rotation.now, consumed_at: null, successor_sealed: null })
      .execute();
    if (rotation.touchSession) await touchSession(trx, rotation.sessionId, rotation.now);
    return true;
  });
}
