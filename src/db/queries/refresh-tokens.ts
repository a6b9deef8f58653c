import { sql } from 'kysely';
import { dialectOf, type Db } from '../database.js';
import { inGroupCommit } from '../group-commit.js';
import { precompiled } from '../precompiled.js';
import { findRefreshGrant, GRANT_COLUMNS, GRANT_TABLES, type RefreshGrant } from './refresh-grants.js';
import { SESSIONS_WITH_OWNER, touchSession } from './sessions.js';
import { isSessionAlive, sessionAliveSql } from './session-liveness.js';

/** A token presented for rotation, with its successor already made. */
export interface RotationAttempt {
  readonly tokenHash: string;
  readonly successorHash: string;
  readonly successorSealed: string;
  readonly now: number;
  readonly idleTimeout: number;
  /** The session's idle clock is written only when it reads this or earlier (see refresh.ts). */
  readonly touchAtOrBefore: number;
}

/** The token's grant as it was read (undefined for an unknown token), and whether the attempt consumed the token. */
interface RotationOutcome {
  readonly grant: RefreshGrant | undefined;
  readonly rotated: boolean;
}

/**
 * Reads a token's grant and rotates the token if its session is alive (session-liveness.ts),
 * atomically, inside or outside the caller's transaction. A conditional update decides races in
 * the database: of several concurrent refreshes of one token exactly one consumes it, and none
 * does once the session is revoked. A caller that lost, or whose session had ended, gets
 * `rotated: false`, having written nothing. PostgreSQL reads and rotates in one statement, one
 * round trip; SQLite reads first, and shares its commit with the other rotations of the turn.
 */
export async function rotateRefreshToken(db: Db, attempt: RotationAttempt): Promise<RotationOutcome> {
  if (dialectOf(db) === 'postgres') return rotateInOneStatement(db, attempt);
  const grant = await findRefreshGrant(db, attempt.tokenHash);
  if (grant === undefined || grant.consumed_at !== null) return { grant, rotated: false };
  if (!isSessionAlive(grant, attempt.now, { refreshIdleTimeout: attempt.idleTimeout })) return { grant, rotated: false };
  const rotated = await inGroupCommit(db, async (trx) => {
    const { now } = attempt;
    const sessionId = grant.session_id;
    const consumed = await consume(trx, { now, successorSealed: attempt.successorSealed, tokenHash: attempt.tokenHash, sessionId });
    if ((consumed.numAffectedRows ?? 0n) === 0n) return false;
    await insertSuccessor(trx, { tokenHash: attempt.successorHash, sessionId, now });
    if (grant.last_used_at <= attempt.touchAtOrBefore) await touchSession(trx, grant.session_id, now);
    return true;
  });
  return { grant, rotated };
}

/** Consumes a token, on SQLite, unless it was consumed already or its session revoked meanwhile. */
const consume = precompiled(
  ({ now, successorSealed, tokenHash, sessionId }: { now: number; successorSealed: string; tokenHash: string; sessionId: string }) => sql`update refresh_tokens set consumed_at = ${now}, successor_sealed = ${successorSealed}
    where token_hash = ${tokenHash} and consumed_at is null
    and exists (select sessions.id from sessions where sessions.id = ${sessionId} and sessions.revoked_at is null)`,
);

const insertSuccessor = precompiled(
  ({ tokenHash, sessionId, now }: { tokenHash: string; sessionId: string; now: number }) => sql`insert into refresh_tokens (token_hash, session_id, created_at, consumed_at, successor_sealed)
    values (${tokenHash}, ${sessionId}, ${now}, null, null)`,
);

/**
 * PostgreSQL's rotation. The CTEs consume the token if it is not consumed and its session alive
 * by sessionAliveSql, insert its successor only if the consumption happened, and move the idle
 * clock when it is due; data-modifying CTEs all run, whether or not the outer query reads them,
 * and the outer query reads the grant as it was before them. The session is found by scalar
 * subqueries, each run once by key (token_hash is the key of refresh_tokens): as a correlated
 * EXISTS, the planner may join the other way round and look the token up again for every session.
 * Not count(*): statements with a `*` are not prepared (see postgres-statements.ts).
 */
const rotateStatement = precompiled(
  ({ now, idleFloor, tokenHash, successorHash, successorSealed, touchAtOrBefore }: RotationAttempt & { idleFloor: number }) =>
    sql<RefreshGrant & { rotated: number }>`with consumed as (update refresh_tokens set consumed_at = ${now}, successor_sealed = ${successorSealed}
      where token_hash = ${tokenHash} and consumed_at is null
      and session_id = (select sessions.id from ${SESSIONS_WITH_OWNER}
        where sessions.id = (select owner.session_id from refresh_tokens as owner where owner.token_hash = ${tokenHash})
        and ${sessionAliveSql(now, idleFloor)})
      returning session_id),
    successor as (insert into refresh_tokens (token_hash, session_id, created_at)
      select cast(${successorHash} as text), consumed.session_id, cast(${now} as bigint) from consumed),
    touched as (update sessions set last_used_at = ${now}
      where id = (select consumed.session_id from consumed) and last_used_at <= ${touchAtOrBefore})
    select ${GRANT_COLUMNS}, (select count(consumed.session_id) from consumed) as rotated
    from ${GRANT_TABLES} where refresh_tokens.token_hash = ${tokenHash}`,
);

async function rotateInOneStatement(db: Db, attempt: RotationAttempt): Promise<RotationOutcome> {
  const { rows } = await rotateStatement(db, { ...attempt, idleFloor: attempt.now - attempt.idleTimeout });
  const row = rows[0];
  if (row === undefined) return { grant: undefined, rotated: false };
  const { rotated, ...grant } = row;
  return { grant, rotated: Number(rotated) > 0 };
}
