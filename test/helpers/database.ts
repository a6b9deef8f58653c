import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { connectPostgres, connectSqlite } from '../../src/db/connect.js';
import type { Database, Dialect } from '../../src/db/database.js';

/** The PostgreSQL server tests use; each test gets its own schema in it. */
export const TEST_POSTGRES_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const postgresUp = await postgresReachable();
if (!postgresUp) {
  // In CI the PostgreSQL suite must run: failing here is louder than any skip.
  if (process.env.CI === 'true') throw new Error(`PostgreSQL is not reachable at ${TEST_POSTGRES_URL}; the PostgreSQL suite cannot be skipped in CI`);
  console.warn(`\n*** PostgreSQL is not reachable at ${TEST_POSTGRES_URL}: PostgreSQL tests are SKIPPED in this run ***\n`);
}

/** The dialects every storage and HTTP test runs on. */
export const TEST_DIALECTS: readonly Dialect[] = postgresUp ? ['sqlite', 'postgres'] : ['sqlite'];

/** A fresh, empty database of the given dialect; `close` removes it. */
export async function createTestDatabase(dialect: Dialect = 'sqlite'): Promise<Database> {
  return dialect === 'postgres' ? createPostgresSchema() : createSqliteFile();
}

function createSqliteFile(): Database {
  const dir = mkdtempSync(join(tmpdir(), 'school-auth-test-'));
  const database = connectSqlite(join(dir, 'test.sqlite'));
  return {
    ...database,
    close: async () => {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A schema of its own per test, so test files run in parallel on one server. */
async function createPostgresSchema(): Promise<Database> {
  const schema = `test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create schema ${schema}`);
  const url = new URL(TEST_POSTGRES_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const database = connectPostgres(url.toString());
  return {
    ...database,
    close: async () => {
      await database.close();
      await adminQuery(`drop schema ${schema} cascade`);
    },
  };
}

/** Runs one statement as the server's admin user, outside any test database. */
export async function adminQuery(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

/** A whole PostgreSQL database of its own, for tests that run real server processes on it. */
export async function createPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `school_auth_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create database ${name}`);
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await adminQuery(`drop database if exists ${name} with (force)`);
    },
  };
}

/** A school row with every column filled from its key, for tests of the storage layer. */
export const schoolRow = (key: string) => ({ key, school_id: key, name: key.toUpperCase(), suspended_at: null, created_at: 1 });

/** How long the sessions seedRefreshGrants makes last, in seconds. */
export const SEEDED_SESSION_LIFETIME = 86_400;

/**
 * School 'k', its admin 'a1' (username 'u'), and for each [session id, token hash] a live session
 * of SEEDED_SESSION_LIFETIME, created at `t0`, holding that one unused refresh token: what a
 * refresh's lookup reads.
 */
export async function seedRefreshGrants(database: Database, t0: number, grants: readonly (readonly [string, string])[]): Promise<void> {
  const db = database.db;
  await db.insertInto('schools').values({ key: 'k', school_id: 'k', name: 'K', suspended_at: null, created_at: t0 }).execute();
  await db
    .insertInto('admins')
    .values({ id: 'a1', school_key: 'k', username_key: 'u', username: 'u', password_hash: 'x', disabled_at: null, created_at: t0, password_changed_at: t0 })
    .execute();
  for (const [id, tokenHash] of grants) {
    await db
      .insertInto('sessions')
      .values({ id, admin_id: 'a1', created_at: t0, last_used_at: t0, expires_at: t0 + SEEDED_SESSION_LIFETIME, revoked_at: null, revoke_reason: null, ip: null, user_agent: null })
      .execute();
    await db.insertInto('refresh_tokens').values({ token_hash: tokenHash, session_id: id, created_at: t0, consumed_at: null, successor_sealed: null }).execute();
  }
}
