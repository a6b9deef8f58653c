import { setImmediate } from 'node:timers';

interface Pending<R> {
  readonly key: string;
  readonly resolve: (row: R | undefined) => void;
  readonly reject: (error: unknown) => void;
}

/** Lookups that leave at once rather than at the end of the turn (as RUN_AT in sqlite-read-batch.ts). */
export const LOOKUPS_AT = 8;

/**
 * Lookups by one unique key asked for during one turn of the event loop, run as one statement
 * (`where key = any($1)`) once LOOKUPS_AT wait or the turn's I/O callbacks have run: PostgreSQL
 * then starts one transaction, one executor and one round trip for all of them, which cost more
 * than the index scans themselves.
 *
 * Invariants: a lookup runs after it was asked for and before it is answered, so it sees every
 * write that finished before it was asked for; a key asked for twice gets the same row; the
 * statement failing fails every lookup of its batch.
 */
export class LookupBatch<R> {
  readonly #run: (keys: readonly string[]) => Promise<ReadonlyMap<string, R>>;
  #pending: Pending<R>[] = [];

  constructor(run: (keys: readonly string[]) => Promise<ReadonlyMap<string, R>>) {
    this.#run = run;
  }

  find(key: string): Promise<R | undefined> {
    if (this.#pending.length === 0) setImmediate(() => this.#flush());
    const found = new Promise<R | undefined>((resolve, reject) => this.#pending.push({ key, resolve, reject }));
    if (this.#pending.length >= LOOKUPS_AT) this.#flush();
    return found;
  }

  #flush(): void {
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    void this.#answer(batch).then(
      (rows) => batch.forEach((pending) => pending.resolve(rows.get(pending.key))),
      (error: unknown) => batch.forEach((pending) => pending.reject(error)),
    );
  }

  /** The batch's rows; a `run` that throws instead of rejecting fails the batch, not the process. */
  #answer(batch: readonly Pending<R>[]): Promise<ReadonlyMap<string, R>> {
    try {
      return this.#run(batch.map((pending) => pending.key));
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
}
