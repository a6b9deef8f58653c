import { sql, type Selectable } from 'kysely';
import { dialectOf, type Db } from '../database.js';
import { TurnBatch } from '../../runtime/turn-batch.js';
import { precompiled } from '../precompiled.js';
import { isStorableText } from '../text.js';
import type { RefreshTokensTable } from '../schema/refresh-tokens.js';
import type { SessionsTable } from '../schema/sessions.js';
import { SESSIONS_WITH_OWNER, type SessionOwner } from './sessions.js';
import { LIVENESS_SQL, type SessionLiveness } from './session-liveness.js';

/** Everything a refresh decides on. */
export type RefreshGrant = Pick<Selectable<RefreshTokensTable>, 'session_id' | 'consumed_at' | 'successor_sealed'> &
  Pick<Selectable<SessionsTable>, 'admin_id' | 'acr' | 'amr'> &
  SessionOwner &
  SessionLiveness;

/** The columns of a RefreshGrant, over SESSIONS_WITH_OWNER joined with refresh_tokens. */
export const GRANT_COLUMNS = sql`refresh_tokens.session_id, refresh_tokens.consumed_at, refresh_tokens.successor_sealed,
    sessions.admin_id, admins.username, admins.school_key, schools.school_id, sessions.acr, sessions.amr, ${LIVENESS_SQL}`;
export const GRANT_TABLES = sql`${SESSIONS_WITH_OWNER} inner join refresh_tokens on refresh_tokens.session_id = sessions.id`;

const grantByHash = precompiled(
  ({ tokenHash }: { tokenHash: string }) => sql<RefreshGrant>`select ${GRANT_COLUMNS} from ${GRANT_TABLES} where "refresh_tokens"."token_hash" = ${tokenHash}`,
);

const grantsByHashes = precompiled(
  ({ tokenHashes }: { tokenHashes: readonly string[] }) =>
    sql<RefreshGrant & { token_hash: string }>`select refresh_tokens.token_hash, ${GRANT_COLUMNS} from ${GRANT_TABLES}
      where "refresh_tokens"."token_hash" = any(cast(${tokenHashes} as text[]))`,
);

/**
 * Each PostgreSQL handle's batch of grant lookups (never a transaction's: it has one connection of
 * its own): one statement for the turn's lookups, since PostgreSQL starts one transaction, one
 * executor and one round trip for all of them, which cost more than the index scans themselves
 * (bench/README.md, the ledger).
 * A hash asked for twice gets the same row; the statement failing fails every lookup it carried.
 */
const batches = new WeakMap<Db, TurnBatch<string, RefreshGrant | undefined>>();

function batchOf(db: Db): TurnBatch<string, RefreshGrant | undefined> {
  let batch = batches.get(db);
  if (batch === undefined) {
    batch = new TurnBatch(async (hashes) => {
      const { rows } = await grantsByHashes(db, { tokenHashes: hashes });
      const byHash = new Map(rows.map(({ token_hash, ...grant }) => [token_hash, grant]));
      return hashes.map((hash) => byHash.get(hash));
    });
    batches.set(db, batch);
  }
  return batch;
}

/**
 * Everything a refresh decides on, read with one query from the token's hash (sql: see
 * SESSIONS_WITH_OWNER). On PostgreSQL, outside a transaction, the lookups of one turn share one
 * statement (above); SQLite shares the turn's read transaction instead (sqlite-driver.ts).
 */
export async function findRefreshGrant(db: Db, tokenHash: string): Promise<RefreshGrant | undefined> {
  // No token hashes to such text (hashes are base64url), and on PostgreSQL it would fail the
  // statement of every lookup it shares.
  if (!isStorableText(tokenHash)) return undefined;
  if (dialectOf(db) === 'postgres' && !db.isTransaction) return batchOf(db).add(tokenHash);
  const { rows } = await grantByHash(db, { tokenHash });
  return rows[0];
}
