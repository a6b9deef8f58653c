import type SQLite from 'better-sqlite3';
import { DefaultConnectionProvider, DefaultQueryExecutor, Kysely, type CompiledQuery, type ConnectionProvider, type DialectAdapter, type QueryCompiler, type QueryResult } from 'kysely';
import type { DatabaseSchema } from './schema/index.js';
import { BetterSqliteDialect, type BetterSqliteDriver } from './sqlite-driver.js';

/**
 * Kysely over one better-sqlite3 connection, with an executor that runs a statement at once when
 * the connection is free (a read-only one with the other reads of its turn: sqlite-read-batch.ts).
 * Kysely's own executor takes the connection, runs, transforms and gives it back through seven
 * async steps, each a promise and a turn of the microtask queue, for a statement that
 * better-sqlite3 finishes synchronously. A top-level statement that finds the connection held
 * waits for it on Kysely's path; the statements of the scope that holds it run at once
 * (HeldConnectionExecutor).
 *
 * Invariants: these executors have no plugins (Kysely's `with*` methods return executors of its own
 * class, with the plugins, which take the ordinary path), and a top-level statement runs only
 * while nothing else holds the connection, so it can never land inside a transaction.
 */
export function sqliteKysely(sqlite: SQLite.Database): { db: Kysely<DatabaseSchema>; driver: BetterSqliteDriver } {
  const dialect = new BetterSqliteDialect(sqlite);
  const driver = dialect.createDriver();
  const connections = new DefaultConnectionProvider(driver);
  const executor = new ImmediateExecutor(driver, dialect, connections);
  return { db: new Kysely<DatabaseSchema>({ config: { dialect }, dialect, driver, executor }), driver };
}

class ImmediateExecutor extends DefaultQueryExecutor {
  readonly #driver: BetterSqliteDriver;
  readonly #compiler: QueryCompiler;

  constructor(driver: BetterSqliteDriver, dialect: BetterSqliteDialect, connections: DefaultConnectionProvider) {
    const compiler = dialect.createQueryCompiler();
    super(compiler, dialect.createAdapter(), connections, []);
    this.#driver = driver;
    this.#compiler = compiler;
  }

  override executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.#driver.runIfFree<R>(query) ?? super.executeQuery<R>(query);
  }

  override withConnectionProvider(connections: ConnectionProvider): DefaultQueryExecutor {
    return new HeldConnectionExecutor(this.#driver, this.#compiler, this.adapter, connections);
  }
}

/**
 * The executor of a transaction (or any scope that holds the connection): Kysely builds one per
 * statement and runs it through the scope's promise chain, several promises and closures for a
 * statement that better-sqlite3 finishes synchronously. This one runs it on the held connection
 * at once. Invariant: only the scope that holds the connection reaches it (Kysely's transaction
 * refuses statements once committed or rolled back, before they get here), and a scope runs its
 * statements one after another, so running at once keeps their order. Nothing streams rows
 * inside a transaction (better-sqlite3 refuses a statement while an iterator is open).
 */
class HeldConnectionExecutor extends DefaultQueryExecutor {
  readonly #driver: BetterSqliteDriver;
  readonly #compiler: QueryCompiler;

  constructor(driver: BetterSqliteDriver, compiler: QueryCompiler, adapter: DialectAdapter, connections: ConnectionProvider) {
    super(compiler, adapter, connections, []);
    this.#driver = driver;
    this.#compiler = compiler;
  }

  override executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.#driver.runHeld<R>(query) ?? super.executeQuery<R>(query);
  }

  override withConnectionProvider(connections: ConnectionProvider): DefaultQueryExecutor {
    return new HeldConnectionExecutor(this.#driver, this.#compiler, this.adapter, connections);
  }
}
