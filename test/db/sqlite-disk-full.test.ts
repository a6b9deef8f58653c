import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestDatabase, schoolRow as school } from '../helpers/database.js';

/**
 * SQLite answers SQLITE_FULL when a write needs a page it cannot have: the file system is full,
 * or (as here, the same error from the same place) the connection's max_page_count is reached.
 * On that error SQLite has already rolled the transaction back.
 */
describe('a transaction that runs out of space on SQLite', () => {
  let database: Database;
  beforeEach(async () => {
    database = await createTestDatabase('sqlite');
    await migrateToLatest(database);
  });
  afterEach(() => database.close());

  const keys = async () => (await database.db.selectFrom('schools').select('key').orderBy('key').execute()).map((row) => row.key);

  async function fileOf(): Promise<string> {
    const { rows } = await sql<{ name: string; file: string }>`pragma database_list`.execute(database.db);
    return rows.find((row) => row.name === 'main')!.file;
  }

  async function limitPages(pages: number | 'current'): Promise<void> {
    const { rows } = await sql<{ page_count: number }>`pragma page_count`.execute(database.db);
    const limit = pages === 'current' ? rows[0]!.page_count : pages;
    await sql.raw(`pragma max_page_count = ${limit}`).execute(database.db);
  }

  const longName = (index: number) => `${'x'.repeat(2000)}-${index}`;

  it('fails with SQLITE_FULL naming the disk and the file, not with the rollback that follows it', async () => {
    const file = await fileOf();
    await limitPages('current');
    const filling = database.db.transaction().execute(async (trx) => {
      for (let index = 0; index < 50; index += 1) await trx.insertInto('schools').values({ ...school(`s${index}`), name: longName(index) }).execute();
    });
    const error = await filling.then(
      () => undefined,
      (failure: unknown) => failure as Error & { code?: string },
    );
    expect(error?.message).not.toContain('cannot rollback');
    expect(error?.code).toBe('SQLITE_FULL');
    expect(error?.message).toContain('disk full');
    expect(error?.message).toContain(file);
  });

  it('keeps none of the failed transaction, and writes again once there is room', async () => {
    await database.db.insertInto('schools').values(school('before')).execute();
    await limitPages('current');
    const filling = database.db.transaction().execute(async (trx) => {
      await trx.insertInto('schools').values(school('partial')).execute();
      for (let index = 0; index < 50; index += 1) await trx.insertInto('schools').values({ ...school(`s${index}`), name: longName(index) }).execute();
    });
    await expect(filling).rejects.toMatchObject({ code: 'SQLITE_FULL' });
    expect(await keys()).toEqual(['before']);
    expect(database.poolStats()).toEqual({ total: 1, idle: 1, waiting: 0 });

    await limitPages(1_000_000);
    await database.db.transaction().execute((trx) => trx.insertInto('schools').values(school('after')).execute());
    expect(await keys()).toEqual(['after', 'before']);
  });
});
