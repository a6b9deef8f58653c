import { sql, type Transaction } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import type { DatabaseSchema } from '../../src/db/schema/index.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestDatabase, schoolRow as school } from '../helpers/database.js';
import { gate } from '../helpers/gate.js';

describe('the SQLite driver and its executor', () => {
  let database: Database;
  beforeEach(async () => {
    database = await createTestDatabase('sqlite');
    await migrateToLatest(database);
  });
  afterEach(() => database.close());

  const keys = async () => (await database.db.selectFrom('schools').select('key').orderBy('key').execute()).map((row) => row.key);

  it('runs a statement from outside a transaction only after the transaction ends, never inside it', async () => {
    const held = gate();
    const transaction = database.db.transaction().execute(async (trx) => {
      await trx.insertInto('schools').values(school('inside')).execute();
      await held.opened;
      throw new Error('roll back');
    });
    await Promise.resolve();
    let outsideDone = false;
    const outside = database.db
      .insertInto('schools')
      .values(school('outside'))
      .execute()
      .then(() => (outsideDone = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(outsideDone).toBe(false);
    expect(database.poolStats()).toEqual({ total: 1, idle: 0, waiting: 1 });

    held.open();
    await expect(transaction).rejects.toThrow('roll back');
    await outside;
    // Had the outside insert run on the connection while the transaction held it, the rollback
    // would have taken it too.
    expect(await keys()).toEqual(['outside']);
    expect(database.poolStats()).toEqual({ total: 1, idle: 1, waiting: 0 });
  });

  it('gives the connection to waiting statements in the order they asked for it', async () => {
    const held = gate();
    const transaction = database.db.transaction().execute(async (trx) => {
      await trx.insertInto('schools').values(school('first')).execute();
      await held.opened;
    });
    await Promise.resolve();
    const order: string[] = [];
    const waiting = ['w1', 'w2', 'w3', 'w4'].map((key) =>
      database.db
        .insertInto('schools')
        .values(school(key))
        .execute()
        .then(() => order.push(key)),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(database.poolStats().waiting).toBe(4);
    held.open();
    await Promise.all([transaction, ...waiting]);
    expect(order).toEqual(['w1', 'w2', 'w3', 'w4']);
    const rowids = await database.db.selectFrom('schools').select('key').orderBy(sql`rowid`).execute();
    expect(rowids.map((row) => row.key)).toEqual(['first', 'w1', 'w2', 'w3', 'w4']);
  });

  it('rejects a failing statement with SQLite’s error and frees the connection for the next', async () => {
    await database.db.insertInto('schools').values(school('taken')).execute();
    await expect(database.db.insertInto('schools').values(school('taken')).execute()).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    expect(database.poolStats()).toEqual({ total: 1, idle: 1, waiting: 0 });
    const failing = database.db.transaction().execute(async (trx) => {
      await trx.insertInto('schools').values(school('rolled-back')).execute();
      await trx.insertInto('schools').values(school('taken')).execute();
    });
    await expect(failing).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    await database.db.insertInto('schools').values(school('after')).execute();
    expect(await keys()).toEqual(['after', 'taken']);
  });

  it('runs a transaction’s statements on the connection it holds, and refuses one after it ended', async () => {
    let ended: Transaction<DatabaseSchema> | undefined;
    await database.db.transaction().execute(async (trx) => {
      await trx.insertInto('schools').values(school('t1')).execute();
      expect(database.poolStats()).toEqual({ total: 1, idle: 0, waiting: 0 });
      await trx.insertInto('schools').values(school('t2')).execute();
      ended = trx;
    });
    await expect(ended!.insertInto('schools').values(school('late')).execute()).rejects.toThrow('Transaction is already committed');
    expect(await keys()).toEqual(['t1', 't2']);
  });

  it('reports changed rows and streams rows as Kysely’s own driver does', async () => {
    await database.db.insertInto('schools').values([school('a'), school('b'), school('c')]).execute();
    const [updated] = await database.db.updateTable('schools').set({ name: 'X' }).where('key', '!=', 'b').execute();
    expect(updated?.numUpdatedRows).toBe(2n);
    const streamed: string[] = [];
    for await (const row of database.db.selectFrom('schools').select('key').orderBy('key').stream()) streamed.push(row.key);
    expect(streamed).toEqual(['a', 'b', 'c']);
  });
});
