import { setImmediate } from 'node:timers';
import type { CompiledQuery, QueryResult } from 'kysely';
import type { SqliteConnection } from './sqlite-connection.js';

interface PendingRead {
  readonly query: CompiledQuery;
  readonly resolve: (result: QueryResult<unknown>) => void;
  readonly reject: (error: Error) => void;
}

/**
 * Once this many reads wait, they run at once rather than at the end of the turn: the requests
 * waiting on them then go on (to the signing thread, say) while the event loop reads the turn's
 * other requests, instead of all waiting for the turn to end (bench/README.md).
 */
export const RUN_AT = 8;

/**
 * The read-only statements asked for during one turn of the event loop, run together in one read
 * transaction once RUN_AT of them wait or the turn's I/O callbacks have run (setImmediate): in
 * WAL mode every transaction takes and gives back the WAL's read lock with system calls that cost
 * several times what one of our indexed reads does, and each statement outside a transaction is a
 * transaction.
 *
 * Invariants: a read runs after it was asked for and before it is answered, on a snapshot no
 * older than its asking; a write of this process runs wholly before a batch or wholly after it,
 * never inside it (the batch is synchronous), so a read sees every write that finished before it
 * was asked for, and may see one asked for while it waited, as it may a concurrent one.
 */
export class ReadBatch {
  readonly #connection: SqliteConnection;
  readonly #whenFree: (work: () => void) => void;
  #pending: PendingRead[] = [];

  /** `whenFree` runs its work synchronously once nothing else holds the connection. */
  constructor(connection: SqliteConnection, whenFree: (work: () => void) => void) {
    this.#connection = connection;
    this.#whenFree = whenFree;
  }

  add<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#pending.length === 0) setImmediate(() => this.#whenFree(() => this.runNow()));
    const answered = new Promise<QueryResult<R>>((resolve, reject) => {
      this.#pending.push({ query, resolve: resolve as (result: QueryResult<unknown>) => void, reject });
    });
    if (this.#pending.length >= RUN_AT) this.#whenFree(() => this.runNow());
    return answered;
  }

  /** Runs what is pending now (also before the connection closes, so no read is left unanswered). */
  runNow(): void {
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    const results = this.#connection.readTogether(batch.map((read) => read.query));
    batch.forEach((read, index) => {
      const result = results[index]!;
      if (result instanceof Error) read.reject(result);
      else read.resolve(result);
    });
  }
}
