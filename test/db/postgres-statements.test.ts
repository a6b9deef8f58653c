import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { connectPostgres } from '../../src/db/connect.js';
import type { Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { findRefreshGrant } from '../../src/db/queries/refresh-tokens.js';
import { TEST_DIALECTS, TEST_POSTGRES_URL, adminQuery } from '../helpers/database.js';

describe.runIf(TEST_DIALECTS.includes('postgres'))('named prepared statements on PostgreSQL', () => {
  const opened: { database: Database; schema: string }[] = [];
  afterEach(async () => {
    for (const { database, schema } of opened.splice(0)) {
      await database.close();
      await adminQuery(`drop schema ${schema} cascade`);
    }
  });

  /** One connection, so that the session whose prepared statements we list is the one that ran the queries. */
  async function open(preparedStatements: boolean): Promise<Database> {
    const schema = `test_${randomBytes(6).toString('hex')}`;
    await adminQuery(`create schema ${schema}`);
    const url = new URL(TEST_POSTGRES_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const database = connectPostgres(url.toString(), {
      poolSize: 1,
      statementTimeoutMs: 5000,
      connectTimeoutMs: 5000,
      ssl: 'off',
      sslCaFile: undefined,
      preparedStatements,
    });
    opened.push({ database, schema });
    await migrateToLatest(database);
    return database;
  }

  const preparedOnConnection = async (database: Database) =>
    (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(database.db)).rows;

  it('runs the hot queries as named statements, prepared once per connection, and nothing else', async () => {
    const database = await open(true);
    expect(await findRefreshGrant(database.db, 'no such token')).toBeUndefined();
    expect(await findRefreshGrant(database.db, 'another')).toBeUndefined();
    await database.db.selectFrom('schools').select('key').execute();

    const statements = await preparedOnConnection(database);
    expect(statements).toHaveLength(1);
    expect(statements[0]?.name).toMatch(/^school_auth_\d+$/);
    expect(statements[0]?.statement).toContain('from "refresh_tokens"');
  });

  it('prepares nothing with DATABASE_PREPARED_STATEMENTS=off', async () => {
    const database = await open(false);
    expect(await findRefreshGrant(database.db, 'no such token')).toBeUndefined();
    expect(await preparedOnConnection(database)).toEqual([]);
  });
});
