import { existsSync, linkSync, openSync, closeSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import SQLite from 'better-sqlite3';
import { loadSqliteDriver } from './sqlite-driver-build.js';

/** Every page in one step: the copy is one read transaction's snapshot, never restarted by writers. */
const ALL_PAGES = 0x7fffffff;

/**
 * Copies a live SQLite database to `target` with SQLite's online backup: a consistent snapshot
 * while the service keeps writing (WAL lets it). The copy holds password hashes and signing keys,
 * so it is created 0600; it is written under a temporary name and then linked to `target`, which
 * fails if `target` exists: a backup never replaces a file, not even one created meanwhile.
 */
export async function backupSqlite(source: string, target: string): Promise<{ bytes: number }> {
  loadSqliteDriver();
  const temporary = join(dirname(target), `.${basename(target)}.${process.pid}.partial`);
  closeSync(openSync(temporary, 'wx', 0o600));
  const database = new SQLite(source, { fileMustExist: true });
  try {
    database.pragma('busy_timeout = 5000');
    await database.backup(temporary, { progress: () => ALL_PAGES });
    linkSync(temporary, target);
    return { bytes: statSync(target).size };
  } finally {
    database.close();
    if (existsSync(temporary)) unlinkSync(temporary);
  }
}
