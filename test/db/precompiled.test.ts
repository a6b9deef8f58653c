import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { precompiled } from '../../src/db/precompiled.js';
import { TEST_DIALECTS, createTestDatabase } from '../helpers/database.js';

const school = (key: string, name: string) => ({ key, school_id: key, name, suspended_at: null, created_at: 1 });

describe.each(TEST_DIALECTS)('a precompiled statement on %s', (dialect) => {
  let database: Database;
  beforeEach(async () => {
    database = await createTestDatabase(dialect);
    await migrateToLatest(database);
    await database.db.insertInto('schools').values([school('a', 'Alpha'), school('b', 'Beta'), school('c', 'Gamma')]).execute();
  });
  afterEach(() => database.close());

  // `to` before `from` in the text, and `from` placed twice: arguments go by name, not by position.
  const namesBetween = precompiled(
    ({ from, to }: { from: string; to: string }) =>
      sql<{ name: string }>`select name from schools where key <= ${to} and key >= ${from} and school_id >= ${from} order by key`,
  );

  it('answers each call with its own arguments, as the template run anew would', async () => {
    const names = async (from: string, to: string) => (await namesBetween(database.db, { from, to })).rows.map((row) => row.name);
    expect(await names('a', 'b')).toEqual(['Alpha', 'Beta']);
    expect(await names('b', 'c')).toEqual(['Beta', 'Gamma']);
    expect(await names('c', 'a')).toEqual([]);
    const anew = await sql<{ name: string }>`select name from schools where key >= ${'b'} and key <= ${'c'} order by key`.execute(database.db);
    expect(await names('b', 'c')).toEqual(anew.rows.map((row) => row.name));
  });

  it('runs inside the caller transaction, seeing its uncommitted writes', async () => {
    const seen = await database.db.transaction().execute(async (trx) => {
      await trx.insertInto('schools').values(school('d', 'Delta')).execute();
      return (await namesBetween(trx, { from: 'd', to: 'd' })).rows;
    });
    expect(seen).toEqual([{ name: 'Delta' }]);
  });

  it('refuses a statement that splices an argument into its text, or has a parameter that is not an argument', async () => {
    const spliced = precompiled(({ key }: { key: string }) => sql`select name from schools where key = ${sql.lit(key)}`);
    const fixed = precompiled(({ key }: { key: string }) => sql`select name from schools where key = ${key} or name = ${'Alpha'}`);
    await expect(spliced(database.db, { key: 'a' })).rejects.toThrow(/place its arguments as parameters, and nothing else/);
    await expect(fixed(database.db, { key: 'a' })).rejects.toThrow(/place its arguments as parameters, and nothing else/);
  });
});
