import type { Db } from '../database.js';

/** A position in the feed: sessions are ordered by (revoked_at, id). */
export interface FeedPosition {
  readonly at: number;
  readonly sid: string;
}

/**
 * Sessions ended at or after `from` (epoch seconds) and after `after` in (revoked_at, id) order,
 * oldest first. Every way a session ends sets `revoked_at` (a credential-epoch move revokes the
 * admin's sessions in the same transaction), so this one column is the whole answer.
 */
export function listRevokedSessions(db: Db, from: number, after: FeedPosition): Promise<{ id: string; revoked_at: number }[]> {
  return db
    .selectFrom('sessions')
    .select(['id', 'revoked_at'])
    .where('revoked_at', '>=', from)
    .where((eb) => eb.or([eb('revoked_at', '>', after.at), eb.and([eb('revoked_at', '=', after.at), eb('id', '>', after.sid)])]))
    .orderBy('revoked_at')
    .orderBy('id')
    .$narrowType<{ revoked_at: number }>()
    .execute();
}
