import type SQLite from 'better-sqlite3';
import { SqliteDialect, type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';
import { SqliteConnection } from './sqlite-connection.js';
import { TurnBatch } from '../runtime/turn-batch.js';

/**
 * Kysely's SQLite dialect with a driver of our own beneath it. Kysely's driver passes every
 * statement through an async mutex (a promise made and awaited to take it, another to give it
 * back) and on release wakes every waiter, all of which but one go back to waiting. Here a free
 * connection is handed out as an already-settled promise, and while a transaction holds it across
 * its awaits, the statements that want it queue and receive it one by one, in order.
 *
 * Invariant: the connection has at most one holder, so a statement from outside a transaction
 * never runs inside it (on SQLite's single connection it would commit or roll back with it).
 */
export class BetterSqliteDialect extends SqliteDialect {
  readonly #driver: BetterSqliteDriver;

  /** `wrote` is told after each statement that may have added to the WAL (see SqliteConnection). */
  constructor(sqlite: SQLite.Database, wrote?: () => void) {
    super({ database: sqlite });
    this.#driver = new BetterSqliteDriver(new SqliteConnection(sqlite, wrote));
  }

  override createDriver(): BetterSqliteDriver {
    return this.#driver;
  }
}

export class BetterSqliteDriver implements Driver {
  readonly #connection: SqliteConnection;
  readonly #handedOut: Promise<DatabaseConnection>;
  readonly #waiting: ((connection: DatabaseConnection) => void)[] = [];
  /**
   * The read-only statements asked for during one turn, run together in one read transaction: in
   * WAL mode every transaction takes and gives back the WAL's read lock with system calls that cost
   * several times what one of our indexed reads does, and each statement outside a transaction is a
   * transaction (bench/README.md, the ledger). A read runs after it was asked for, on a snapshot no
   * older than its asking; a write of this process runs wholly before a batch or wholly after it
   * (the batch is synchronous once it holds the connection), so a read sees every write that
   * finished before it was asked.
   */
  readonly #reads: TurnBatch<CompiledQuery, QueryResult<unknown>>;
  #held = false;

  constructor(connection: SqliteConnection) {
    this.#connection = connection;
    this.#handedOut = Promise.resolve(connection);
    this.#reads = new TurnBatch((queries) => new Promise((resolve) => this.#whenFree(() => resolve(connection.readTogether(queries)))));
  }

  init(): Promise<void> {
    return settled;
  }

  acquireConnection(): Promise<DatabaseConnection> {
    if (!this.#held) {
      this.#held = true;
      return this.#handedOut;
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /**
   * Runs `query` now if nothing holds the connection, or with this turn's other reads if it only
   * reads; otherwise it must wait its turn.
   */
  runIfFree<R>(query: CompiledQuery): Promise<QueryResult<R>> | undefined {
    if (this.#held) return undefined;
    if (this.#connection.readsOnly(query.sql)) return this.#reads.add(query) as Promise<QueryResult<R>>;
    return this.#connection.executeQuery<R>(query);
  }

  /** Runs `work` synchronously as the connection's holder, now or in its turn. */
  #whenFree(work: () => void): void {
    const run = () => {
      try {
        work();
      } finally {
        void this.releaseConnection();
      }
    };
    if (this.#held) this.#waiting.push(run);
    else {
      this.#held = true;
      run();
    }
  }

  releaseConnection(): Promise<void> {
    const next = this.#waiting.shift();
    // Handed straight to the next waiter: the connection stays held, nobody can slip in between.
    if (next === undefined) this.#held = false;
    else next(this.#connection);
    return settled;
  }

  beginTransaction(): Promise<void> {
    return this.#connection.exec('begin');
  }

  commitTransaction(): Promise<void> {
    return this.#connection.exec('commit');
  }

  rollbackTransaction(): Promise<void> {
    return this.#connection.rollBack();
  }

  destroy(): Promise<void> {
    this.#reads.flush();
    return this.#connection.close();
  }

  /** The connection, for what concerns the file rather than statements (a full disk). */
  get connection(): SqliteConnection {
    return this.#connection;
  }

  /** Whether the connection is free, and how many statements wait for it, for the pool metrics. */
  stats(): { idle: number; waiting: number } {
    return { idle: this.#held ? 0 : 1, waiting: this.#waiting.length };
  }
}

const settled = Promise.resolve();
