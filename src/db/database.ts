import { PostgresAdapter, type Kysely, type Transaction } from 'kysely';
import type { DatabaseSchema } from './schema/index.js';

export type Dialect = 'sqlite' | 'postgres';

/** The one storage handle the service passes around: queries take `db` first. */
export type Db = Kysely<DatabaseSchema>;

/** The connection's lifecycle; queries never need it, they take `db`. */
export interface Database {
  readonly db: Db;
  /** Cheap round trip used by /readyz. */
  ping(): Promise<void>;
  /**
   * Runs `work` while holding the lock that serializes migrations across processes: PostgreSQL
   * takes Kysely's advisory lock itself; SQLite needs one of its own.
   */
  withMigrationLock<T>(work: () => Promise<T>): Promise<T>;
  /** Connection pool use, for metrics. */
  poolStats(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

/** The one way to ask which database a handle (or a transaction of it) talks to. */
export function dialectOf<Schema>(db: Kysely<Schema>): Dialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * Runs `work` atomically: in a new transaction, or in the caller's when `db` already is one, so
 * query functions that need several statements work inside or outside a transaction alike.
 */
export function inTransaction<T>(db: Db, work: (trx: Transaction<DatabaseSchema>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db as Transaction<DatabaseSchema>);
  return db.transaction().execute(work);
}
