import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Config } from '../config/config.js';
import type { Database } from './database.js';
import { withNamedStatements } from './postgres-statements.js';
import { startCheckpointer, type Checkpointer } from './wal-checkpointer.js';
import { sqliteKysely } from './sqlite-kysely.js';
import type { DatabaseSchema } from './schema/index.js';
import { SQLITE_FILE } from './database-target.js';
import { explainSqliteOpenError } from './open-problem.js';
import { prepareDataDir, restrictSqliteFiles } from './file-permissions.js';
import { withFileLock } from './migration-lock.js';
import { loadSqliteDriver } from './sqlite-driver-build.js';
import { checkIntact } from './sqlite-integrity.js';
import { pingSqlite } from './sqlite-ping.js';

type StorageConfig = Pick<Config, 'databaseUrl' | 'dataDir' | 'sqliteSynchronous' | 'database'>;

interface SqliteOptions {
  readonly synchronous?: Config['sqliteSynchronous'];
  /** WAL checkpoints on a thread of their own (the server does this); see wal-checkpointer.ts. */
  readonly backgroundCheckpoints?: { readonly onError: (error: Error) => void };
  /** Every page checked before anything is written (sqlite-integrity.ts): `serve` and `migrate`. */
  readonly checkPages?: boolean;
}

/** Opens SQLite under DATA_DIR, or PostgreSQL when DATABASE_URL is set. */
export function connect(config: StorageConfig, sqliteOptions: Omit<SqliteOptions, 'synchronous'> = {}): Database {
  if (config.databaseUrl !== undefined) return connectPostgres(config.databaseUrl, config.database);
  try {
    loadSqliteDriver();
    prepareDataDir(config.dataDir);
    return connectSqlite(join(config.dataDir, SQLITE_FILE), { ...sqliteOptions, synchronous: config.sqliteSynchronous });
  } catch (error) {
    throw explainSqliteOpenError(error, config.dataDir);
  }
}

/** Past this many WAL pages the committing connection checkpoints itself, checkpointer or not. */
const FALLBACK_CHECKPOINT_FRAMES = 20_000;

export function connectSqlite(file: string, options: SqliteOptions = {}): Database {
  const synchronous = options.synchronous ?? 'NORMAL';
  if (file !== ':memory:') restrictSqliteFiles(file);
  const sqlite = new SQLite(file);
  try {
    // Before the first pragma: setting WAL on a file in another journal mode writes to it.
    checkIntact(sqlite, options.checkPages === true ? 'pages' : 'schema');
    // WAL lets readers proceed during a write; busy_timeout makes a second process (the CLI) wait
    // for the lock instead of failing at once. In WAL mode, synchronous=NORMAL keeps every committed
    // transaction through a process crash and only risks the latest ones on an OS crash or power
    // loss; FULL (SQLITE_SYNCHRONOUS) adds an fsync per commit, which blocks the event loop.
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma(`synchronous = ${synchronous}`);
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
  } catch (error) {
    // Closed, so that the WAL and shared-memory files it opened are removed again.
    sqlite.close();
    throw error;
  }
  const checkpointer =
    options.backgroundCheckpoints === undefined
      ? undefined
      : startCheckpointer({ file, synchronous, intervalMs: 200, restartFrames: 4000, busyTimeoutMs: 1000 }, options.backgroundCheckpoints.onError);
  if (checkpointer !== undefined) sqlite.pragma(`wal_autocheckpoint = ${FALLBACK_CHECKPOINT_FRAMES}`);
  return sqliteDatabase(sqlite, checkpointer);
}

/** The Database over an open, configured better-sqlite3 connection (connectSqlite's, or a test's). */
export function sqliteDatabase(sqlite: SQLite.Database, checkpointer?: Checkpointer): Database {
  const { db, driver } = sqliteKysely(sqlite, checkpointer?.wrote);
  return {
    db,
    ping: () => pingSqlite(db, driver.connection, sqlite.name),
    withMigrationLock: (work) => withFileLock(`${sqlite.name}.migration-lock`, work),
    poolStats: () => ({ total: 1, ...driver.stats() }),
    close: async () => {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

// Timestamps are BIGINT in PostgreSQL; they fit a JS number, so read them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

const defaultPostgresOptions: Config['database'] = {
  poolSize: 10,
  statementTimeoutMs: 5000,
  connectTimeoutMs: 5000,
  ssl: 'off',
  sslCaFile: undefined,
  preparedStatements: true,
};

function sslOptions(options: Config['database']): pg.PoolConfig['ssl'] {
  if (options.ssl === 'off') return undefined;
  const ca = options.sslCaFile === undefined ? undefined : readFileSync(options.sslCaFile, 'utf8');
  // `require` encrypts without checking the server's certificate (like libpq's sslmode=require).
  return options.ssl === 'require' ? { rejectUnauthorized: false } : { rejectUnauthorized: true, ca };
}

export function connectPostgres(connectionString: string, options: Config['database'] = defaultPostgresOptions): Database {
  const pool = new pg.Pool({
    connectionString,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs,
    statement_timeout: options.statementTimeoutMs === 0 ? undefined : options.statementTimeoutMs,
    ssl: sslOptions(options),
  });
  // A dropped connection must not crash the process. An idle one is discarded by the pool; one in
  // use also fails its query (answered 503), and then emits 'error' with no listener of the
  // pool's attached, which Node would treat as uncaught. The next query opens a fresh connection.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool: options.preparedStatements ? withNamedStatements(pool) : pool }) });
  return {
    db,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    withMigrationLock: (work) => work(),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => db.destroy(),
  };
}
