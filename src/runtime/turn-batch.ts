import { setImmediate } from 'node:timers';

/**
 * Once this many items wait, a batch leaves at once rather than at the end of the turn: the
 * callers waiting on it then go on (to the signing thread, say) while the event loop reads the
 * turn's other requests, instead of all waiting for the turn to end (bench/README.md, the ledger).
 */
export const BATCH_AT = 8;

/** A batch's answer, one entry an item in the order given: a value, or the Error of that item. */
export type Answers<R> = readonly (R | Error)[];

interface Waiting<I, R> {
  readonly item: I;
  readonly resolve: (value: R) => void;
  readonly reject: (error: Error) => void;
}

/**
 * Items asked for during one turn of the event loop, handed to `run` together: at BATCH_AT, or
 * once the turn's I/O callbacks have run (setImmediate), when every request read in the turn has
 * asked. Work whose fixed cost (a transaction, a statement, a message to a thread) outweighs one
 * item's batches here; what it saves is in bench/README.md's ledger.
 *
 * Invariants: every item is answered exactly once; `run` sees an item after it was asked for;
 * `run` failing (throwing, rejecting, or answering a different number of entries) fails every
 * item of its batch and no other.
 */
export class TurnBatch<I, R> {
  readonly #run: (items: readonly I[]) => Answers<R> | Promise<Answers<R>>;
  readonly #at: number;
  #waiting: Waiting<I, R>[] = [];

  constructor(run: (items: readonly I[]) => Answers<R> | Promise<Answers<R>>, at = BATCH_AT) {
    this.#run = run;
    this.#at = at;
  }

  add(item: I): Promise<R> {
    if (this.#waiting.length === 0) setImmediate(() => this.flush());
    const answered = new Promise<R>((resolve, reject) => this.#waiting.push({ item, resolve, reject }));
    if (this.#waiting.length >= this.#at) this.flush();
    return answered;
  }

  /** Hands what waits to `run` now (also before what `run` needs closes, so nothing is left unanswered). */
  flush(): void {
    const batch = this.#waiting;
    if (batch.length === 0) return;
    this.#waiting = [];
    let answers: Answers<R> | Promise<Answers<R>>;
    try {
      answers = this.#run(batch.map((waiting) => waiting.item));
    } catch (error) {
      return failAll(batch, error);
    }
    if (answers instanceof Promise) void answers.then((settled) => settleEach(batch, settled), (error: unknown) => failAll(batch, error));
    else settleEach(batch, answers);
  }
}

function settleEach<I, R>(batch: readonly Waiting<I, R>[], answers: Answers<R>): void {
  if (answers.length !== batch.length) return failAll(batch, new Error(`a batch of ${batch.length} was answered with ${answers.length}`));
  batch.forEach((waiting, index) => {
    const answer = answers[index] as R | Error;
    if (answer instanceof Error) waiting.reject(answer);
    else waiting.resolve(answer);
  });
}

function failAll<I, R>(batch: readonly Waiting<I, R>[], error: unknown): void {
  const reason = error instanceof Error ? error : new Error(String(error));
  for (const waiting of batch) waiting.reject(reason);
}
