import { PostgresAdapter, type QueryCreator } from 'kysely';
import type { Db } from '../database.js';
import type { DatabaseSchema } from '../schema/index.js';
import { prepareQuery } from '../prepared.js';
import { sqliteTransaction } from '../sqlite-group-commit.js';
import { updateLastUsed } from './sessions.js';

const selectRefreshGrant = prepareQuery((db: Db, tokenHash: string) =>
  db
    .selectFrom('refresh_tokens')
    .innerJoin('sessions', 'sessions.id', 'refresh_tokens.session_id')
    .innerJoin('admins', 'admins.id', 'sessions.admin_id')
    .innerJoin('schools', 'schools.key', 'admins.school_key')
    .select([
      'refresh_tokens.session_id',
      'refresh_tokens.consumed_at',
      'refresh_tokens.successor_sealed',
      'sessions.admin_id',
      'sessions.last_used_at',
      'sessions.expires_at',
      'sessions.revoked_at',
      'admins.username',
      'admins.school_key',
      'admins.disabled_at',
      'schools.school_id',
      'schools.suspended_at',
    ])
    .where('refresh_tokens.token_hash', '=', tokenHash),
);

/** Everything a refresh decides on, read with one query from the token's hash. */
export async function findRefreshGrant(db: Db, tokenHash: string) {
  return (await selectRefreshGrant(db, tokenHash)).rows[0];
}

export type RefreshGrant = NonNullable<Awaited<ReturnType<typeof findRefreshGrant>>>;

/**
 * Consumes a token unless it was consumed already or its session was revoked: the condition that
 * decides a race between two refreshes of one token, or between a refresh and a revocation.
 */
function consumeStatement(creator: QueryCreator<DatabaseSchema>, tokenHash: string, sessionId: string, sealed: string, now: number) {
  return creator
    .updateTable('refresh_tokens')
    .set({ consumed_at: now, successor_sealed: sealed })
    .where('token_hash', '=', tokenHash)
    .where('consumed_at', 'is', null)
    .where((eb) =>
      eb.exists(eb.selectFrom('sessions').select('sessions.id').where('sessions.id', '=', sessionId).where('sessions.revoked_at', 'is', null)),
    );
}

const consumeToken = prepareQuery((db: Db, tokenHash: string, sessionId: string, sealed: string, now: number) =>
  consumeStatement(db, tokenHash, sessionId, sealed, now),
);

const insertToken = prepareQuery((db: Db, tokenHash: string, sessionId: string, now: number) =>
  db.insertInto('refresh_tokens').values({ token_hash: tokenHash, session_id: sessionId, created_at: now, consumed_at: null, successor_sealed: null }),
);

/**
 * PostgreSQL rotates in one statement (one round trip instead of five): the CTEs consume the
 * token, insert its successor only if the consumption happened, and move the idle clock when
 * `touch` is set. The data-modifying CTEs all run, whether or not the outer query reads them.
 */
const rotateInOneStatement = prepareQuery(
  (db: Db, tokenHash: string, sessionId: string, sealed: string, successorHash: string, now: number, touch: boolean) =>
    db
      .with('consumed', (qb) => consumeStatement(qb, tokenHash, sessionId, sealed, now).returning('session_id'))
      .with('successor', (qb) =>
        qb
          .insertInto('refresh_tokens')
          .columns(['token_hash', 'session_id', 'created_at'])
          .expression((eb) =>
            eb
              .selectFrom('consumed')
              .select([eb.cast<string>(eb.val(successorHash), 'text').as('token_hash'), 'consumed.session_id', eb.cast<number>(eb.val(now), 'bigint').as('created_at')]),
          ),
      )
      .with('touched', (qb) =>
        qb
          .updateTable('sessions')
          .set({ last_used_at: now })
          .where('id', 'in', (eb) => eb.selectFrom('consumed').select('consumed.session_id'))
          .where((eb) => eb.cast<boolean>(eb.val(touch), 'boolean')),
      )
      .selectFrom('consumed')
      .select((eb) => eb.fn.countAll().as('rotated')),
);

/**
 * Rotates a refresh token. The conditional update decides races in the database: of several
 * concurrent refreshes of one token exactly one consumes it, and none succeeds once the session
 * is revoked. Returns false when this caller lost (the token was already consumed or revoked).
 * The session's idle clock is written too when `touchSession` says it is due. SQLite runs the
 * statements in-process, where a round trip costs nothing, in a transaction it may share with the
 * other rotations of the same event-loop turn (see sqlite-group-commit.ts).
 */
export async function rotateRefreshToken(
  db: Db,
  rotation: { tokenHash: string; sessionId: string; successorHash: string; successorSealed: string; now: number; touchSession: boolean },
): Promise<boolean> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const { rows } = await rotateInOneStatement(
      db,
      rotation.tokenHash,
      rotation.sessionId,
      rotation.successorSealed,
      rotation.successorHash,
      rotation.now,
      rotation.touchSession,
    );
    return Number(rows[0]?.rotated ?? 0) > 0;
  }
  return sqliteTransaction(db, (run) => {
    const consumed = run(consumeToken.compile(db, rotation.tokenHash, rotation.sessionId, rotation.successorSealed, rotation.now));
    if (consumed.numAffectedRows === 0n) return false;
    run(insertToken.compile(db, rotation.successorHash, rotation.sessionId, rotation.now));
    if (rotation.touchSession) run(updateLastUsed.compile(db, rotation.sessionId, rotation.now));
    return true;
  });
}

/** Logout by refresh token: ends the token's session in one statement, returning who it was. */
export async function revokeSessionByToken(db: Db, tokenHash: string, reason: string, now: number) {
  return db
    .updateTable('sessions')
    .set({ revoked_at: now, revoke_reason: reason })
    .where('id', '=', db.selectFrom('refresh_tokens').select('session_id').where('token_hash', '=', tokenHash))
    .where('revoked_at', 'is', null)
    .returning(['id', 'admin_id'])
    .executeTakeFirst();
}
