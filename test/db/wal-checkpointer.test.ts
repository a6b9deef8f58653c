import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Checkpointer, CheckpointerOptions } from '../../src/db/wal-checkpointer.js';

// The thread runs the compiled worker, so the module comes from the build (`npm run build` first).
const { startCheckpointer } = (await import(new URL('../../dist/db/wal-checkpointer.js', import.meta.url).href)) as {
  startCheckpointer: (options: Omit<CheckpointerOptions, 'pending'>, onError: (error: Error) => void) => Checkpointer;
};

describe('the WAL checkpointer thread', () => {
  let dir: string;
  let file: string;
  let writer: SQLite.Database;
  let checkpointer: Checkpointer;
  const errors: Error[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'school-auth-checkpointer-'));
    file = join(dir, 'db.sqlite');
    writer = new SQLite(file);
    writer.pragma('journal_mode = WAL');
    writer.pragma('wal_autocheckpoint = 0');
    writer.exec('create table t (n integer)');
    writer.pragma('wal_checkpoint(TRUNCATE)');
    checkpointer = startCheckpointer({ file, synchronous: 'NORMAL', intervalMs: 20, restartFrames: 4000, busyTimeoutMs: 100 }, (error) => errors.push(error));
  });

  afterEach(async () => {
    await checkpointer.stop();
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Rows of `t` in the database file alone, without its WAL: what checkpoints have copied. */
  const rowsInMainFile = () => {
    const copy = join(dir, `copy-${Date.now()}-${Math.random()}.sqlite`);
    copyFileSync(file, copy);
    const sqlite = new SQLite(copy, { readonly: true });
    try {
      return (sqlite.prepare('select count(*) as n from t').get() as { n: number }).n;
    } finally {
      sqlite.close();
    }
  };

  const eventually = async (expected: number) => {
    const deadline = Date.now() + 5000;
    while (rowsInMainFile() !== expected && Date.now() < deadline) await sleep(10);
    return rowsInMainFile();
  };

  it('checkpoints after the server says it wrote, and not while nobody says so', async () => {
    writer.prepare('insert into t values (1)').run();
    // Ten intervals without a word from the server: the thread sleeps, the row stays in the WAL.
    await sleep(200);
    expect(rowsInMainFile()).toBe(0);
    checkpointer.wrote();
    expect(await eventually(1)).toBe(1);
    writer.prepare('insert into t values (2)').run();
    checkpointer.wrote();
    checkpointer.wrote();
    expect(await eventually(2)).toBe(2);
    expect(errors).toEqual([]);
  });
});
