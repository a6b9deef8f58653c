import type { Kysely } from 'kysely';
import type { DatabaseSchema } from './schema/index.js';

export type Dialect = 'sqlite' | 'postgres';

/** The one storage handle the service passes around: queries take `db` first. */
export type Db = Kysely<DatabaseSchema>;

export interface Database {
  readonly db: Db;
  readonly dialect: Dialect;
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
