import type { Db } from '../database.js';

/** A position in the feed: sessions are ordered by (revocation_seq, id). */
export interface FeedPosition {
  readonly seq: number;
  readonly sid: string;
}

export interface RevokedSession {
  readonly id: string;
  readonly revocation_seq: number;
}

/**
 * At most `limit` sessions ended at or after `from` (epoch seconds, the window) and after `after`
 * in (revocation_seq, id) order. Every way a session ends stamps `revocation_seq` in the statement
 * that ends it (see session-ending.ts), and positions become visible in order, so a cursor taken
 * from this order never passes a revocation that commits later, whatever the writers' clocks say.
 * `revoked_at` only bounds the window: a writer's clock that is behind shortens its stay by as much.
 */
export function listRevokedSessions(db: Db, from: number, after: FeedPosition, limit: number): Promise<RevokedSession[]> {
  return db
    .selectFrom('sessions')
    .select(['id', 'revocation_seq'])
    .where('revoked_at', '>=', from)
    .where((eb) => eb.or([eb('revocation_seq', '>', after.seq), eb.and([eb('revocation_seq', '=', after.seq), eb('id', '>', after.sid)])]))
    .orderBy('revocation_seq')
    .orderBy('id')
    .limit(limit)
    .$narrowType<{ revocation_seq: number }>()
    .execute();
}
