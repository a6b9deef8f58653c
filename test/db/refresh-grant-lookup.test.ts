import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectPostgres } from '../../src/db/connect.js';
import type { Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { findRefreshGrant } from '../../src/db/queries/refresh-grants.js';
import { TEST_DIALECTS, TEST_POSTGRES_URL, adminQuery, createTestDatabase, seedRefreshGrants } from '../helpers/database.js';

const T0 = 1_700_000_000;

const seed = (database: Database, sessions: readonly string[]) => seedRefreshGrants(database, T0, sessions.map((id) => [id, `hash of ${id}`] as const));

describe.each(TEST_DIALECTS)('findRefreshGrant on %s', (dialect) => {
  let database: Database;
  beforeEach(async () => {
    database = await createTestDatabase(dialect);
    await migrateToLatest(database);
    await seed(database, ['s1', 's2', 's3']);
  });
  afterEach(() => database.close());

  it("answers the lookups of one turn each with its own token's grant, and an unknown token with none", async () => {
    const grants = await Promise.all(['hash of s2', 'no such hash', 'hash of s1', 'hash of s2'].map((hash) => findRefreshGrant(database.db, hash)));
    expect(grants.map((grant) => grant?.session_id)).toEqual(['s2', undefined, 's1', 's2']);
    expect(grants[0]).toMatchObject({ admin_id: 'a1', username: 'u', school_id: 'k', consumed_at: null, revoked_at: null });
  });

  it("takes a hash no token can have (NUL) for an unknown one, failing none of its turn's other lookups", async () => {
    const [odd, known] = await Promise.all([findRefreshGrant(database.db, 'hash of s1\0'), findRefreshGrant(database.db, 'hash of s1')]);
    expect(odd).toBeUndefined();
    expect(known?.session_id).toBe('s1');
  });

  it('sees a revocation committed before the lookup was asked for', async () => {
    await database.db.updateTable('sessions').set({ revoked_at: T0 + 5, revoke_reason: 'operator' }).where('id', '=', 's3').execute();
    const [revoked, alive] = await Promise.all([findRefreshGrant(database.db, 'hash of s3'), findRefreshGrant(database.db, 'hash of s1')]);
    expect(Number(revoked?.revoked_at)).toBe(T0 + 5);
    expect(alive?.revoked_at).toBeNull();
  });

  it('reads inside a transaction what the transaction wrote', async () => {
    const seen = await database.db.transaction().execute(async (trx) => {
      await trx.updateTable('refresh_tokens').set({ consumed_at: T0 + 9 }).where('token_hash', '=', 'hash of s1').execute();
      return findRefreshGrant(trx, 'hash of s1');
    });
    expect(Number(seen?.consumed_at)).toBe(T0 + 9);
  });
});

describe.runIf(TEST_DIALECTS.includes('postgres'))('findRefreshGrant on PostgreSQL, counted', () => {
  let database: Database;
  let schema: string;
  beforeEach(async () => {
    schema = `test_${randomBytes(6).toString('hex')}`;
    await adminQuery(`create schema ${schema}`);
    const url = new URL(TEST_POSTGRES_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    // One connection: pg_prepared_statements then lists the statements of the connection that ran them.
    database = connectPostgres(url.toString(), { poolSize: 1, statementTimeoutMs: 5000, connectTimeoutMs: 5000, ssl: 'off', sslCaFile: undefined, preparedStatements: true });
    await migrateToLatest(database);
    await seed(database, ['s1', 's2', 's3']);
  });
  afterEach(async () => {
    await database.close();
    await adminQuery(`drop schema ${schema} cascade`);
  });

  it("runs one turn's lookups as one statement", async () => {
    const grants = await Promise.all(['hash of s1', 'hash of s2', 'hash of s3'].map((hash) => findRefreshGrant(database.db, hash)));
    expect(grants.map((grant) => grant?.session_id)).toEqual(['s1', 's2', 's3']);
    const { rows } = await sql<{ statement: string; runs: number }>`select statement, generic_plans + custom_plans as runs from pg_prepared_statements`.execute(database.db);
    const lookups = rows.filter((row) => row.statement.includes('"refresh_tokens"."token_hash" = any('));
    expect(lookups.map((row) => Number(row.runs))).toEqual([1]);
  });
});
