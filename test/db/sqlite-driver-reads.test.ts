import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectSqlite } from '../../src/db/connect.js';
import type { Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { BATCH_AT } from '../../src/runtime/turn-batch.js';
import { schoolRow as school } from '../helpers/database.js';
import { gate } from '../helpers/gate.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('reads of one turn, run together on SQLite', () => {
  let dir: string;
  let file: string;
  let database: Database;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'school-auth-read-batch-'));
    file = join(dir, 'test.sqlite');
    database = connectSqlite(file);
    await migrateToLatest(database);
  });
  afterEach(async () => {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const keys = async () => (await database.db.selectFrom('schools').select('key').orderBy('key').execute()).map((row) => row.key);

  /** Another process (the CLI, say) commits the school 'other', synchronously. */
  const commitFromAnotherProcess = () => {
    const other = new SQLite(file);
    other.prepare("insert into schools (key, school_id, name, created_at) values ('other', 'other', 'OTHER', 1)").run();
    other.close();
  };

  it('answers fewer than BATCH_AT reads asked for in one turn from one snapshot, taken after the last of them was asked', async () => {
    const first = keys();
    // Committed between the two reads being asked for.
    commitFromAnotherProcess();
    const second = keys();
    // Neither may miss a commit that happened before it was answered and after it was asked.
    expect(await first).toEqual(['other']);
    expect(await second).toEqual(['other']);
  });

  it('never runs a waiting read inside a transaction that took the connection first', async () => {
    const read = keys();
    const held = gate();
    const inserted = gate();
    const transaction = database.db.transaction().execute(async (trx) => {
      await trx.insertInto('schools').values(school('inside')).execute();
      inserted.open();
      await held.opened;
      throw new Error('roll back');
    });
    await inserted.opened;
    await nextTurn();
    expect(database.poolStats()).toEqual({ total: 1, idle: 0, waiting: 1 });

    held.open();
    await expect(transaction).rejects.toThrow('roll back');
    // Inside the transaction it would have seen the row that was then rolled back.
    expect(await read).toEqual([]);
    expect(database.poolStats()).toEqual({ total: 1, idle: 1, waiting: 0 });
  });

  it('fails only the read that failed, and answers the others of its turn', async () => {
    await database.db.insertInto('schools').values(school('a')).execute();
    const failing = sql<{ value: unknown }>`select json_extract('{', '$') as value`.execute(database.db);
    const fine = keys();
    await expect(failing).rejects.toThrow('malformed JSON');
    expect(await fine).toEqual(['a']);
    expect(await keys()).toEqual(['a']);
  });

  it('runs every BATCH_AT reads of a turn at once, without waiting for the turn to end', async () => {
    const early = Array.from({ length: BATCH_AT }, () => keys());
    // Still the same turn: the reads above have run if nothing made them wait for its end.
    commitFromAnotherProcess();
    const late = Array.from({ length: BATCH_AT + 3 }, () => keys());
    expect(await Promise.all(early)).toEqual(Array.from({ length: BATCH_AT }, () => []));
    // Asked after the commit, so each must see it, whether run at BATCH_AT or at the turn's end.
    expect(await Promise.all(late)).toEqual(Array.from({ length: BATCH_AT + 3 }, () => ['other']));
  });

  it('answers the reads still waiting for their turn when the database closes', async () => {
    await database.db.insertInto('schools').values(school('kept')).execute();
    const read = keys();
    await database.close();
    expect(await read).toEqual(['kept']);
    database = connectSqlite(file);
  });
});
