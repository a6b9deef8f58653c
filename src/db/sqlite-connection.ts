import type SQLite from 'better-sqlite3';
import type { CompiledQuery, DatabaseConnection, QueryResult } from 'kysely';
import { explainSqliteFailure, isDiskFull } from './sqlite-failures.js';

/**
 * The one connection to a SQLite file, as Kysely's driver sees it. better-sqlite3 runs each
 * statement synchronously, so a statement is finished when `executeQuery` returns. A failure
 * that is about the file (a full disk, damage) is reported naming it (sqlite-failures.ts).
 *
 * Preparing costs more than running our small indexed queries, so prepared statements are kept
 * by SQL text (a bounded set: queries are fixed shapes).
 */
export class SqliteConnection implements DatabaseConnection {
  readonly #sqlite: SQLite.Database;
  readonly #statements = new Map<string, SQLite.Statement>();
  /** Told after each statement that may have added to the WAL (the checkpointer waits for it). */
  readonly #wrote: () => void;
  #diskFull = false;

  constructor(sqlite: SQLite.Database, wrote: () => void = () => undefined) {
    this.#sqlite = sqlite;
    this.#wrote = wrote;
  }

  /** From a statement failing for want of space until `writable()`: only a write shows it is over. */
  get diskFull(): boolean {
    return this.#diskFull;
  }

  /** A write succeeded after the disk was found full. */
  writable(): void {
    this.#diskFull = false;
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.#settledWith(() => {
      const statement = this.#prepare(query.sql);
      if (statement.reader) return { rows: statement.all(query.parameters) as R[] };
      const { changes, lastInsertRowid } = statement.run(query.parameters);
      this.#wrote();
      return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
    });
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- better-sqlite3 iterates synchronously
  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const statement = this.#prepare(query.sql);
    if (!statement.reader) throw new Error('only statements that return rows can be streamed');
    for (const row of statement.iterate(query.parameters)) yield { rows: [row as R] };
  }

  /**
   * Whether `text` only reads (better-sqlite3 knows it once the statement is prepared). Text that
   * does not prepare is not a read: `executeQuery` then answers with SQLite's error.
   */
  readsOnly(text: string): boolean {
    try {
      const statement = this.#prepare(text);
      return statement.reader && statement.readonly;
    } catch {
      return false;
    }
  }

  /**
   * Runs read-only statements in one read transaction: one snapshot, and the WAL's read lock
   * taken and given back once rather than once per statement (three system calls each). Each
   * statement's failure is its own; the transaction failing fails them all.
   */
  readTogether(queries: readonly CompiledQuery[]): (QueryResult<unknown> | Error)[] {
    if (queries.length === 1) return [this.#readOne(queries[0]!)];
    try {
      this.#prepare('begin').run();
      const results = queries.map((query) => this.#readOne(query));
      // A statement that failed may have ended the transaction (SQLite does for some errors).
      if (this.#sqlite.inTransaction) this.#prepare('commit').run();
      return results;
    } catch (error) {
      this.#rollBackQuietly();
      const failure = this.#failure(error);
      return queries.map(() => failure);
    }
  }

  /** After a failed begin or commit of reads: nothing was written, so nothing can be lost. */
  #rollBackQuietly(): void {
    try {
      if (this.#sqlite.inTransaction) this.#prepare('rollback').run();
    } catch {
      // Only a closed or broken connection refuses a rollback; its next statement reports it.
    }
  }

  #readOne(query: CompiledQuery): QueryResult<unknown> | Error {
    try {
      return { rows: this.#prepare(query.sql).all(query.parameters) };
    } catch (error) {
      return this.#failure(error);
    }
  }

  /** Runs a statement that takes no parameters and returns nothing (begin, commit). */
  exec(text: string): Promise<void> {
    return this.#settledWith(() => {
      this.#prepare(text).run();
      this.#wrote();
    });
  }

  /**
   * Rolls back the transaction, if it is still open: on a full disk (and on some I/O and memory
   * errors) SQLite has already rolled it back itself, and a ROLLBACK would then fail with an
   * error that hides the one that ended it.
   */
  rollBack(): Promise<void> {
    return this.#settledWith(() => {
      if (this.#sqlite.inTransaction) this.#prepare('rollback').run();
    });
  }

  close(): Promise<void> {
    return this.#settledWith(() => void this.#sqlite.close());
  }

  /**
   * What an async function returning `work()` would give, without its extra promise and turns:
   * better-sqlite3 has finished by the time it returns or throws.
   */
  #settledWith<T>(work: () => T): Promise<T> {
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(this.#failure(error));
    }
  }

  #failure(error: unknown): Error {
    if (isDiskFull(error)) this.#diskFull = true;
    return explainSqliteFailure(asError(error), this.#sqlite.name);
  }

  #prepare(text: string): SQLite.Statement {
    let statement = this.#statements.get(text);
    if (statement === undefined) {
      if (this.#statements.size >= 1000) this.#statements.clear();
      statement = this.#sqlite.prepare(text);
      this.#statements.set(text, statement);
    }
    return statement;
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
