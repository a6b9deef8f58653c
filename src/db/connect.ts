import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Config } from '../config/config.js';
import type { Database } from './database.js';
import { withNamedStatements } from './postgres-statements.js';
import { startCheckpointer } from './wal-checkpointer.js';
import { sqliteKysely } from './sqlite-kysely.js';
import type { DatabaseSchema } from './schema/index.js';
import { SQLITE_FILE } from './database-target.js';
import { explainSqliteOpenError } from './open-problem.js';
import { makePrivateFile, prepareDataDir, restrictSqliteFiles } from './file-permissions.js';

export { SQLITE_FILE } from './database-target.js';

type StorageConfig = Pick<Config, 'databaseUrl' | 'dataDir' | 'sqliteSynchronous' | 'database'>;

export interface SqliteOptions {
  readonly synchronous?: Config['sqliteSynchronous'];
  /** WAL checkpoints on a thread of their own (the server does this); see wal-checkpointer.ts. */
  readonly backgroundCheckpoints?: { readonly onError: (error: Error) => void };
}

/** Opens SQLite under DATA_DIR, or PostgreSQL when DATABASE_URL is set. */
export function connect(config: StorageConfig, sqliteOptions: Omit<SqliteOptions, 'synchronous'> = {}): Database {
  if (config.databaseUrl !== undefined) return connectPostgres(config.databaseUrl, config.database);
  try {
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
  // WAL lets readers proceed during a write; busy_timeout makes a second process (the CLI) wait
  // for the lock instead of failing at once. In WAL mode, synchronous=NORMAL keeps every committed
  // transaction through a process crash and only risks the latest ones on an OS crash or power
  // loss; FULL (SQLITE_SYNCHRONOUS) adds an fsync per commit, which blocks the event loop.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${synchronous}`);
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const checkpointer =
    options.backgroundCheckpoints === undefined
      ? undefined
      : startCheckpointer({ file, synchronous, intervalMs: 200, restartFrames: 4000, busyTimeoutMs: 1000 }, options.backgroundCheckpoints.onError);
  if (checkpointer !== undefined) sqlite.pragma(`wal_autocheckpoint = ${FALLBACK_CHECKPOINT_FRAMES}`);
  const { db, driver } = sqliteKysely(sqlite);
  return {
    db,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    withMigrationLock: (work) => withFileLock(`${file}.migration-lock`, work),
    poolStats: () => ({ total: 1, ...driver.stats() }),
    close: async () => {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

/**
 * A lock between processes sharing one SQLite file (the server and the CLI starting together):
 * an exclusive transaction on a separate lock file, which a second process waits for.
 */
async function withFileLock<T>(lockFile: string, work: () => Promise<T>): Promise<T> {
  // Within one process the wait must not block the event loop (the holder needs it to finish),
  // so callers queue on a promise first; the file lock then only ever waits for other processes.
  const previous = lockQueues.get(lockFile) ?? Promise.resolve();
  const turn = previous.then(() => holdFileLock(lockFile, work));
  const settled = turn.then(
    () => undefined,
    () => undefined,
  );
  lockQueues.set(lockFile, settled);
  try {
    return await turn;
  } finally {
    if (lockQueues.get(lockFile) === settled) lockQueues.delete(lockFile);
  }
}

const lockQueues = new Map<string, Promise<void>>();

async function holdFileLock<T>(lockFile: string, work: () => Promise<T>): Promise<T> {
  makePrivateFile(lockFile);
  const lock = new SQLite(lockFile);
  try {
    lock.pragma('busy_timeout = 60000');
    lock.exec('BEGIN EXCLUSIVE');
    return await work();
  } finally {
    if (lock.inTransaction) lock.exec('COMMIT');
    lock.close();
  }
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
