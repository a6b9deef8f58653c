import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database, Db } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { prepareQuery } from '../../src/db/prepared.js';
import { sqliteTransaction } from '../../src/db/sqlite-direct.js';
import { createTestDatabase } from '../helpers/database.js';

const findSchoolName = prepareQuery((db: Db, key: string) => db.selectFrom('schools').select('name').where('key', '=', key));
const insertSchool = prepareQuery((db: Db, key: string, name: string) =>
  db.insertInto('schools').values({ key, school_id: key, name, suspended_at: null, created_at: 1 }),
);
const renameSchool = prepareQuery((db: Db, key: string, name: string) => db.updateTable('schools').set({ name }).where('key', '=', key));

/** A promise and the function that settles it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => undefined as void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Lets every pending callback and I/O completion run, several times over. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

/** Tracks whether a promise has settled yet. */
function watch<T>(promise: Promise<T>): { settled: () => boolean; result: Promise<T> } {
  let done = false;
  const result = promise.finally(() => (done = true));
  return { settled: () => done, result };
}

describe('SQLite statements outside Kysely’s executor', () => {
  let database: Database;
  let db: Db;

  beforeEach(async () => {
    database = await createTestDatabase('sqlite');
    await migrateToLatest(database);
    db = database.db;
    await insertSchool(db, 'a', 'Alpha');
  });

  afterEach(async () => {
    await database.close();
  });

  it('give the results Kysely gives, for reads and writes', async () => {
    const direct = await insertSchool(db, 'b', 'Beta');
    const viaKysely = await db.executeQuery(insertSchool.compile(db, 'c', 'Gamma'));
    expect(direct.numAffectedRows).toBe(1n);
    expect(viaKysely.numAffectedRows).toBe(1n);
    expect(typeof direct.insertId).toBe('bigint');
    expect((await renameSchool(db, 'nope', 'x')).numAffectedRows).toBe(0n);
    expect((await findSchoolName(db, 'b')).rows).toEqual((await db.executeQuery(findSchoolName.compile(db, 'b'))).rows);
    expect((await findSchoolName(db, 'c')).rows).toEqual([{ name: 'Gamma' }]);
  });

  it('reject (rather than throw) when a statement fails', async () => {
    const duplicate = insertSchool(db, 'a', 'Duplicate key');
    expect(duplicate).toBeInstanceOf(Promise);
    await expect(duplicate).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
  });

  it('run at once on an idle connection, even while Kysely holds it between statements', async () => {
    const held = gate();
    const holder = db.connection().execute(async () => held.opened);
    await settle();
    // Through Kysely this read would wait for the holder; with no transaction open it need not.
    const read = watch(findSchoolName(db, 'a'));
    await settle();
    expect(read.settled()).toBe(true);
    expect((await read.result).rows).toEqual([{ name: 'Alpha' }]);
    held.open();
    await holder;
  });

  it('wait for an open Kysely transaction, and never see what it wrote before it commits', async () => {
    const held = gate();
    const transaction = db.transaction().execute(async (trx) => {
      await renameSchool(trx, 'a', 'Renamed');
      await held.opened;
      throw new Error('roll back');
    });
    await settle();
    const read = watch(findSchoolName(db, 'a'));
    await settle();
    expect(read.settled()).toBe(false);
    held.open();
    await expect(transaction).rejects.toThrow('roll back');
    expect((await read.result).rows).toEqual([{ name: 'Alpha' }]);
  });

  it('a query given a transaction runs inside it', async () => {
    const seen = await db.transaction().execute(async (trx) => {
      await renameSchool(trx, 'a', 'Inside');
      return (await findSchoolName(trx, 'a')).rows;
    });
    expect(seen).toEqual([{ name: 'Inside' }]);
  });
});

describe('sqliteTransaction', () => {
  let database: Database;
  let db: Db;

  beforeEach(async () => {
    database = await createTestDatabase('sqlite');
    await migrateToLatest(database);
    db = database.db;
    await insertSchool(db, 'a', 'Alpha');
  });

  afterEach(async () => {
    await database.close();
  });

  it('commits everything the work ran, and returns its result', async () => {
    const result = await sqliteTransaction(db, (run) => {
      run(insertSchool.compile(db, 'b', 'Beta'));
      return run(renameSchool.compile(db, 'a', 'Renamed')).numAffectedRows;
    });
    expect(result).toBe(1n);
    expect((await findSchoolName(db, 'a')).rows).toEqual([{ name: 'Renamed' }]);
    expect((await findSchoolName(db, 'b')).rows).toEqual([{ name: 'Beta' }]);
  });

  it('rolls everything back when the work throws, and rethrows', async () => {
    const failing = sqliteTransaction(db, (run) => {
      run(renameSchool.compile(db, 'a', 'Renamed'));
      run(insertSchool.compile(db, 'a', 'Duplicate key'));
    });
    await expect(failing).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    expect((await findSchoolName(db, 'a')).rows).toEqual([{ name: 'Alpha' }]);
    // the connection is usable again, outside any transaction
    await sqliteTransaction(db, (run) => run(renameSchool.compile(db, 'a', 'After')));
    expect((await findSchoolName(db, 'a')).rows).toEqual([{ name: 'After' }]);
  });

  it('waits for an open Kysely transaction, then runs after it', async () => {
    const held = gate();
    const order: string[] = [];
    const transaction = db.transaction().execute(async (trx) => {
      await renameSchool(trx, 'a', 'First');
      await held.opened;
      order.push('kysely');
    });
    await settle();
    const ours = watch(
      sqliteTransaction(db, (run) => {
        order.push('ours');
        return run(findSchoolName.compile(db, 'a')).rows;
      }),
    );
    await settle();
    expect(ours.settled()).toBe(false);
    held.open();
    await transaction;
    expect(await ours.result).toEqual([{ name: 'First' }]);
    expect(order).toEqual(['kysely', 'ours']);
  });

  it('refuses a database that is not a root SQLite instance', async () => {
    await expect(db.transaction().execute((trx) => sqliteTransaction(trx, () => 1))).rejects.toThrow(/not a root SQLite database/);
  });
});
