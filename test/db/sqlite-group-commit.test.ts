import { sql } from 'kysely';
import { describe, expect } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { registerSqliteConnection, rootSqliteConnection } from '../../src/db/sqlite-direct.js';
import { sqliteTransaction } from '../../src/db/sqlite-group-commit.js';
import { findSchoolName, gate, insertSchool, renameSchool, schoolTest, settle, watch } from '../helpers/sqlite-statements.js';

describe('sqliteTransaction (group commit)', () => {
  /** Counts the transactions begun on the connection from now on. */
  function countTransactions(db: Db): () => number {
    const connection = rootSqliteConnection(db)!;
    let begun = 0;
    registerSqliteConnection(db, {
      sqlite: connection.sqlite,
      prepare: (text) => {
        if (text === 'begin') begun += 1;
        return connection.prepare(text);
      },
    });
    return () => begun;
  }

  schoolTest('commits everything the work ran, and resolves with its result', async ({ db }) => {
    const result = await sqliteTransaction(db, (run) => {
      run(insertSchool.compile(db, 'b', 'Beta'));
      return run(renameSchool.compile(db, 'a', 'Renamed')).numAffectedRows;
    });
    expect(result).toBe(1n);
    expect((await findSchoolName(db, 'a')).rows).toEqual([{ name: 'Renamed' }]);
    expect((await findSchoolName(db, 'b')).rows).toEqual([{ name: 'Beta' }]);
  });

  schoolTest('gives the works of one event-loop turn one transaction, and each its own result', async ({ db }) => {
    const begun = countTransactions(db);
    const keys = ['b', 'c', 'd', 'e'];
    const results = await Promise.all(keys.map((key) => sqliteTransaction(db, (run) => run(insertSchool.compile(db, key, `School ${key}`)).numAffectedRows)));
    expect(results).toEqual([1n, 1n, 1n, 1n]);
    expect(begun()).toBe(1);
    for (const key of keys) expect((await findSchoolName(db, key)).rows).toEqual([{ name: `School ${key}` }]);
    await sqliteTransaction(db, (run) => run(renameSchool.compile(db, 'a', 'Later')));
    expect(begun()).toBe(2);
  });

  schoolTest('rolls back and rejects only the work that threw; the others of its turn commit', async ({ db }) => {
    const first = sqliteTransaction(db, (run) => run(insertSchool.compile(db, 'b', 'Beta')).numAffectedRows);
    const failing = sqliteTransaction(db, (run) => {
      run(renameSchool.compile(db, 'a', 'Renamed'));
      run(insertSchool.compile(db, 'a', 'Duplicate key'));
    });
    const last = sqliteTransaction(db, (run) => run(insertSchool.compile(db, 'c', 'Gamma')).numAffectedRows);
    await expect(failing).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    expect(await first).toBe(1n);
    expect(await last).toBe(1n);
    expect((await findSchoolName(db, 'a')).rows).toEqual([{ name: 'Alpha' }]);
    expect((await findSchoolName(db, 'b')).rows).toEqual([{ name: 'Beta' }]);
    expect((await findSchoolName(db, 'c')).rows).toEqual([{ name: 'Gamma' }]);
  });

  schoolTest('rejects every work of the group when the commit fails, and keeps none of their writes', async ({ db }) => {
    // A deferred foreign key is checked at COMMIT: a token of a session that does not exist.
    const defer = sql`pragma defer_foreign_keys = on`.compile(db);
    const orphan = sql`insert into refresh_tokens (token_hash, session_id, created_at) values ('h', 'no such session', 1)`.compile(db);
    const innocent = sqliteTransaction(db, (run) => run(insertSchool.compile(db, 'b', 'Beta')));
    const culprit = sqliteTransaction(db, (run) => {
      run(defer);
      run(orphan);
    });
    await expect(innocent).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' });
    await expect(culprit).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' });
    expect((await findSchoolName(db, 'b')).rows).toEqual([]);
    expect(rootSqliteConnection(db)!.sqlite.inTransaction).toBe(false);
    await sqliteTransaction(db, (run) => run(insertSchool.compile(db, 'b', 'Beta')));
    expect((await findSchoolName(db, 'b')).rows).toEqual([{ name: 'Beta' }]);
  });

  schoolTest('waits for an open Kysely transaction, then runs after it', async ({ db }) => {
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

  schoolTest('refuses a database that is not a root SQLite instance', async ({ db }) => {
    await expect(db.transaction().execute((trx) => sqliteTransaction(trx, () => 1))).rejects.toThrow(/not a root SQLite database/);
  });
});
