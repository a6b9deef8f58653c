import { sql, type Selectable } from 'kysely';
import { dialectOf, type Db } from '../database.js';
import type { RefreshTokensTable } from '../schema/refresh-tokens.js';
import type { SessionsTable } from '../schema/sessions.js';
import { inGroupCommit } from '../group-commit.js';
import { precompiled } from '../precompiled.js';
import { LIVENESS_SQL, SESSIONS_WITH_OWNER, touchSession, type SessionLiveness, type SessionOwner } from './sessions.js';

/** Everything a refresh decides on. */
export type RefreshGrant = Pick<Selectable<RefreshTokensTable>, 'session_id' | 'consumed_at' | 'successor_sealed'> &
  Pick<Selectable<SessionsTable>, 'admin_id' | 'acr' | 'amr'> &
  SessionOwner &
  SessionLiveness;

const refreshGrantByHash = precompiled((tokenHash: string) => sql<RefreshGrant>`select refresh_tokens.session_id, refresh_tokens.consumed_at, refresh_tokens.successor_sealed,
    sessions.admin_id, admins.username, admins.school_key, schools.school_id, sessions.acr, sessions.amr, ${LIVENESS_SQL}
    from ${SESSIONS_WITH_OWNER} inner join refresh_tokens on refresh_tokens.session_id = sessions.id
    where "refresh_tokens"."token_hash" = ${tokenHash}`);

/** Everything a refresh decides on, read with one query from the token's hash (sql: see SESSIONS_WITH_OWNER). */
export async function findRefreshGrant(db: Db, tokenHash: string): Promise<RefreshGrant | undefined> {
  const { rows } = await refreshGrantByHash(db, tokenHash);
  return rows[0];
}

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
 * Consumes a token unless it was consumed already or its session was revoked: the condition that
 * decides a race between two refreshes of one token, or between a refresh and a revocation.
 * Like the lookup, the statements of every rotation are written with `sql`.
 */
function consumeToken(now: number, successorSealed: string, tokenHash: string, sessionId: string) {
  return sql`update refresh_tokens set consumed_at = ${now}, successor_sealed = ${successorSealed}
    where token_hash = ${tokenHash} and consumed_at is null
    and exists (select sessions.id from sessions where sessions.id = ${sessionId} and sessions.revoked_at is null)`;
}

const consume = precompiled(consumeToken);
const insertSuccessor = precompiled(
  (tokenHash: string, sessionId: string, createdAt: number) => sql`insert into refresh_tokens (token_hash, session_id, created_at, consumed_at, successor_sealed)
    values (${tokenHash}, ${sessionId}, ${createdAt}, null, null)`,
);

/**
 * Rotates a refresh token, atomically, inside or outside the caller's transaction. The
 * conditional update decides races in the database: of several concurrent refreshes of one token
 * exactly one consumes it, and none succeeds once the session is revoked. Returns false when this
 * caller lost (the token was already consumed, or its session revoked), having written nothing.
 * On SQLite it shares its commit with the other rotations of the same event-loop turn; PostgreSQL
 * rotates in one statement, one round trip instead of a transaction's five.
 */
export async function rotateRefreshToken(db: Db, rotation: Rotation): Promise<boolean> {
  if (dialectOf(db) === 'postgres') return (await rotateInOneStatement(db, rotation)) > 0;
  return inGroupCommit(db, async (trx) => {
    const consumed = await consume(trx, rotation.now, rotation.successorSealed, rotation.tokenHash, rotation.sessionId);
    if ((consumed.numAffectedRows ?? 0n) === 0n) return false;
    await insertSuccessor(trx, rotation.successorHash, rotation.sessionId, rotation.now);
    if (rotation.touchSession) await touchSession(trx, rotation.sessionId, rotation.now);
    return true;
  });
}

/**
 * The CTEs consume the token, insert its successor only if the consumption happened, and move
 * the idle clock when asked to; data-modifying CTEs all run, whether or not the outer query reads
 * them. `now` is passed three times because a precompiled statement places each argument once.
 * Not count(*): statements with a `*` are not prepared (see postgres-statements.ts).
 */
const rotateStatement = precompiled(
  (consumedAt: number, sealed: string, tokenHash: string, sessionId: string, successorHash: string, createdAt: number, touchedAt: number, touch: boolean) =>
    sql<{ rotated: string }>`with consumed as (${consumeToken(consumedAt, sealed, tokenHash, sessionId)} returning session_id),
    successor as (insert into refresh_tokens (token_hash, session_id, created_at)
      select cast(${successorHash} as text), consumed.session_id, cast(${createdAt} as bigint) from consumed),
    touched as (update sessions set last_used_at = ${touchedAt}
      where id in (select consumed.session_id from consumed) and cast(${touch} as boolean))
    select count(consumed.session_id) as rotated from consumed`,
);

/** Rotates in one statement on PostgreSQL; returns how many tokens were consumed (0 or 1). */
async function rotateInOneStatement(db: Db, rotation: Rotation): Promise<number> {
  const { now } = rotation;
  const { rows } = await rotateStatement(db, now, rotation.successorSealed, rotation.tokenHash, rotation.sessionId, rotation.successorHash, now, now, rotation.touchSession);
  return Number(rows[0]?.rotated ?? 0);
}
