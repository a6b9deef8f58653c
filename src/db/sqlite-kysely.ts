import type SQLite from 'better-sqlite3';
import { DefaultConnectionProvider, DefaultQueryExecutor, Kysely, type CompiledQuery, type QueryResult } from 'kysely';
import type { DatabaseSchema } from './schema/index.js';
import { BetterSqliteDialect, type BetterSqliteDriver } from './sqlite-driver.js';

/**
 * Kysely over one better-sqlite3 connection, with an executor that runs a statement at once when
 * the connection is free (a read-only one with the other reads of its turn: sqlite-driver.ts).
 * Kysely's own executor takes the connection, runs, transforms and gives it back through seven
 * async steps, each a promise and a turn of the microtask queue, for a statement that
 * better-sqlite3 finishes synchronously. When a transaction holds the connection,
 * or for anything but a top-level statement, Kysely's path runs as always.
 *
 * Invariants: this executor has no plugins (Kysely's `with*` methods return executors of its own
 * class, with the plugins, which take the ordinary path), and a statement runs only while nothing
 * else holds the connection, so it can never land inside a transaction.
 */
export function sqliteKysely(sqlite: SQLite.Database, wrote?: () => void): { db: Kysely<DatabaseSchema>; driver: BetterSqliteDriver } {
  const dialect = new BetterSqliteDialect(sqlite, wrote);
  const driver = dialect.createDriver();
  const connections = new DefaultConnectionProvider(driver);
  const executor = new ImmediateExecutor(driver, dialect, connections);
  return { db: new Kysely<DatabaseSchema>({ config: { dialect }, dialect, driver, executor }), driver };
}

class ImmediateExecutor extends DefaultQueryExecutor {
  readonly #driver: BetterSqliteDriver;

  constructor(driver: BetterSqliteDriver, dialect: BetterSqliteDialect, connections: DefaultConnectionProvider) {
    super(dialect.createQueryCompiler(), dialect.createAdapter(), connections, []);
    this.#driver = driver;
  }

  override executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.#driver.runIfFree<R>(query) ?? super.executeQuery<R>(query);
  }
}
