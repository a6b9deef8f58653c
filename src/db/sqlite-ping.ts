import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { sql } from 'kysely';
import type { Db } from './database.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { diskFull } from './sqlite-failures.js';

/**
 * Free space that counts as room again after a full disk: a few hundred logins' worth of pages.
 * Without it, a small write that fits the WAL's old pages would call the disk writable while
 * every write that needs a new page still fails.
 */
const ROOM_BYTES = 1 << 20;

/**
 * Whether the SQLite database serves: one read; and once a statement failed for want of space,
 * room on the file system and a write, since reads go on working on a full disk. The write is
 * one page: the header's user_version (which nothing in school-auth uses) set to the value it
 * has. Until both, the database is not ready (/readyz 503) and the outage goes on (outage-watch.ts).
 */
export async function pingSqlite(db: Db, connection: SqliteConnection, file: string): Promise<void> {
  await sql`select 1`.execute(db);
  if (!connection.diskFull) return;
  if (file !== ':memory:') {
    const { bavail, bsize } = statfsSync(dirname(file));
    if (bavail * bsize < ROOM_BYTES) throw diskFull(file, new Error(`${bavail * bsize} bytes free`));
  }
  await db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ user_version: number }>`pragma user_version`.execute(trx);
    await sql.raw(`pragma user_version = ${Number(rows[0]?.user_version ?? 0)}`).execute(trx);
  });
  connection.writable();
}
