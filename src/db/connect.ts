import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Config } from '../config.js';
import type { Database } from './database.js';
import type { DatabaseSchema } from './schema/index.js';

export const SQLITE_FILE = 'school-auth.sqlite';

/** Opens SQLite under DATA_DIR, or PostgreSQL when DATABASE_URL is set. */
export function connect(config: Pick<Config, 'databaseUrl' | 'dataDir' | 'sqliteSynchronous'>): Database {
  if (config.databaseUrl !== undefined) return connectPostgres(config.databaseUrl);
  mkdirSync(config.dataDir, { recursive: true });
  return connectSqlite(join(config.dataDir, SQLITE_FILE), config.sqliteSynchronous);
}

export function connectSqlite(file: string, synchronous: Config['sqliteSynchronous'] = 'FULL'): Database {
  const sqlite = new SQLite(file);
  // WAL lets readers proceed during a write; busy_timeout makes a second process (the CLI) wait
  // for the lock instead of failing at once.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${synchronous}`);
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: sqlite }) });
  return {
    db,
    dialect: 'sqlite',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

// Timestamps are BIGINT in PostgreSQL; they fit a JS number, so read them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function connectPostgres(connectionString: string): Database {
  const pool = new pg.Pool({ connectionString });
  // A dropped connection must not crash the process: the next query gets a fresh one.
  pool.on('error', () => undefined);
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}
