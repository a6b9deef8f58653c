import { describe, expect } from 'vitest';
import { findSchoolName, gate, insertSchool, renameSchool, schoolTest, settle, watch } from '../helpers/sqlite-statements.js';

describe('SQLite statements outside Kysely’s executor', () => {
  schoolTest('give the results Kysely gives, for reads and writes', async ({ db }) => {
    const direct = await insertSchool(db, 'b', 'Beta');
    const viaKysely = await db.executeQuery(insertSchool.compile(db, 'c', 'Gamma'));
    expect(direct.numAffectedRows).toBe(1n);
    expect(viaKysely.numAffectedRows).toBe(1n);
    expect(typeof direct.insertId).toBe('bigint');
    expect((await renameSchool(db, 'nope', 'x')).numAffectedRows).toBe(0n);
    expect((await findSchoolName(db, 'b')).rows).toEqual((await db.executeQuery(findSchoolName.compile(db, 'b'))).rows);
    expect((await findSchoolName(db, 'c')).rows).toEqual([{ name: 'Gamma' }]);
  });

  schoolTest('reject (rather than throw) when a statement fails', async ({ db }) => {
    const duplicate = insertSchool(db, 'a', 'Duplicate key');
    expect(duplicate).toBeInstanceOf(Promise);
    await expect(duplicate).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
  });

  schoolTest('run at once on an idle connection, even while Kysely holds it between statements', async ({ db }) => {
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

  schoolTest('wait for an open Kysely transaction, and never see what it wrote before it commits', async ({ db }) => {
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

  schoolTest('a query given a transaction runs inside it', async ({ db }) => {
    const seen = await db.transaction().execute(async (trx) => {
      await renameSchool(trx, 'a', 'Inside');
      return (await findSchoolName(trx, 'a')).rows;
    });
    expect(seen).toEqual([{ name: 'Inside' }]);
  });
});
