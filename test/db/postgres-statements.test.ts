import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { connectPostgres } from '../../src/db/connect.js';
import type { Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { findRefreshGrant } from '../../src/db/queries/refresh-grants.js';
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

  it('names every data statement with explicit columns by its text, prepared once per connection', async () => {
    const database = await open(true);
    const beforehand = new Set((await preparedOnConnection(database)).map((statement) => statement.name));
    expect(await findRefreshGrant(database.db, 'no such token')).toBeUndefined();
    expect(await findRefreshGrant(database.db, 'another')).toBeUndefined();
    await database.db.selectFrom('schools').select('key').execute();
    // Not named: a `select *` (a migration adding a column would break its cached plan).
    await database.db.selectFrom('schools').selectAll().execute();

    const statements = (await preparedOnConnection(database)).filter((statement) => !beforehand.has(statement.name));
    expect(statements).toHaveLength(2);
    for (const statement of statements) expect(statement.name).toMatch(/^s_[0-9a-f]{40}$/);
    expect(statements.map((statement) => statement.statement).join('\n')).toContain('"refresh_tokens"."token_hash" = any(cast($1 as text[]))');
    expect(statements.some((statement) => statement.statement.includes('*'))).toBe(false);
  });

  it('gives the same text the same name on every connection', async () => {
    const first = await open(true);
    const second = await open(true);
    const names = async (database: Database) => (await preparedOnConnection(database)).map((statement) => statement.name);
    const migrated = new Set([...(await names(first)), ...(await names(second))]);
    await first.db.selectFrom('schools').select('name').where('key', '=', 'a').execute();
    await second.db.selectFrom('schools').select('name').where('key', '=', 'b').execute();
    const added = async (database: Database) => (await names(database)).filter((name) => !migrated.has(name));
    expect(await added(first)).toEqual(await added(second));
    expect(await added(first)).toHaveLength(1);
  });

  it('prepares nothing with DATABASE_PREPARED_STATEMENTS=off', async () => {
    const database = await open(false);
    expect(await findRefreshGrant(database.db, 'no such token')).toBeUndefined();
    expect(await preparedOnConnection(database)).toEqual([]);
  });
});
