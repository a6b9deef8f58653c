import { sql } from 'kysely';
import type { Db } from '../database.js';

/** A position in the feed: sessions are ordered by (revocation_seq, id). */
export interface FeedPosition {
  readonly seq: number;
  readonly sid: string;
}

interface RevokedSession {
  readonly id: string;
  readonly revocation_seq: number;
}

/**
 * The lowest position a session ended at or after `from` can hold: the smallest in the window,
 * else the next one to be given. Read in one statement (one snapshot): a revocation committing
 * meanwhile takes a position at or above it. Reads only the index on (revoked_at, revocation_seq):
 * `revocation_seq + 0` keeps SQLite from answering min() by walking the (revocation_seq, id) index
 * from its lowest entry, through every session that left the window but is not pruned yet.
 */
export async function findWindowStart(db: Db, from: number): Promise<number> {
  const { rows } = await sql<{ start: number | string }>`select min(position) as start from (
      select min(revocation_seq + 0) as position from sessions where revoked_at >= ${from}
      union all select last_position + 1 as position from revocation_sequence where id = 1
    ) as candidates`.execute(db);
  return Number(rows[0]?.start ?? 1);
}

/**
 * At most `limit` sessions ended at or after `from` (epoch seconds, the window) and after `after`
 * in (revocation_seq, id) order. Every way a session ends stamps `revocation_seq` in the statement
 * that ends it (see session-ending.ts), and positions become visible in order, so a cursor taken
 * from this order never passes a revocation that commits later, whatever the writers' clocks say.
 * One range scan of the index on (revocation_seq, id), stopped after `limit` rows; `revoked_at`
 * only bounds the window (a writer's clock that is behind shortens a session's stay by as much).
 */
export function listRevokedSessions(db: Db, from: number, after: FeedPosition, limit: number): Promise<RevokedSession[]> {
  return db
    .selectFrom('sessions')
    .select(['id', 'revocation_seq'])
    .where((eb) => eb(eb.refTuple('revocation_seq', 'id'), '>', eb.tuple(after.seq, after.sid)))
    .where('revoked_at', '>=', from)
    .orderBy('revocation_seq')
    .orderBy('id')
    .limit(limit)
    .$narrowType<{ revocation_seq: number }>()
    .execute();
}
