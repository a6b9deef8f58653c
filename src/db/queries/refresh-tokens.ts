import type { QueryCreator } from 'kysely';
import { dialectOf, type Db } from '../database.js';
import type { DatabaseSchema } from '../schema/index.js';
import { inGroupCommit } from '../group-commit.js';
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
 * Consumes a token unless it was consumed already or its session was revoked: the condition that
 * decides a race between two refreshes of one token, or between a refresh and a revocation.
 */
function consumeToken(creator: QueryCreator<DatabaseSchema>, rotation: Rotation) {
  return creator
    .updateTable('refresh_tokens')
    .set({ consumed_at: rotation.now, successor_sealed: rotation.successorSealed })
    .where('token_hash', '=', rotation.tokenHash)
    .where('consumed_at', 'is', null)
    .where((eb) =>
      eb.exists(eb.selectFrom('sessions').select('sessions.id').where('sessions.id', '=', rotation.sessionId).where('sessions.revoked_at', 'is', null)),
    );
}

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
    const consumed = await consumeToken(trx, rotation).executeTakeFirst();
    if (consumed.numUpdatedRows === 0n) return false;
    await trx
      .insertInto('refresh_tokens')
      .values({ token_hash: rotation.successorHash, session_id: rotation.sessionId, created_at: rotation.now, consumed_at: null, successor_sealed: null })
      .execute();
    if (rotation.touchSession) await touchSession(trx, rotation.sessionId, rotation.now);
    return true;
  });
}

/**
 * The CTEs consume the token, insert its successor only if the consumption happened, and move
 * the idle clock when asked to; data-modifying CTEs all run, whether or not the outer query reads
 * them. Returns how many tokens were consumed (0 or 1).
 */
async function rotateInOneStatement(db: Db, rotation: Rotation): Promise<number> {
  const row = await db
    .with('consumed', (qb) => consumeToken(qb, rotation).returning('session_id'))
    .with('successor', (qb) =>
      qb
        .insertInto('refresh_tokens')
        .columns(['token_hash', 'session_id', 'created_at'])
        .expression((eb) =>
          eb
            .selectFrom('consumed')
            .select([eb.cast<string>(eb.val(rotation.successorHash), 'text').as('token_hash'), 'consumed.session_id', eb.cast<number>(eb.val(rotation.now), 'bigint').as('created_at')]),
        ),
    )
    .with('touched', (qb) =>
      qb
        .updateTable('sessions')
        .set({ last_used_at: rotation.now })
        .where('id', 'in', (eb) => eb.selectFrom('consumed').select('consumed.session_id'))
        .where((eb) => eb.cast<boolean>(eb.val(rotation.touchSession), 'boolean')),
    )
    .selectFrom('consumed')
    // Not count(*): statements with a `*` are not prepared (see postgres-statements.ts).
    .select((eb) => eb.fn.count<string>('consumed.session_id').as('rotated'))
    .executeTakeFirst();
  return Number(row?.rotated ?? 0);
}
