import type { KeyObject } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { TurnBatch, type Answers } from '../../runtime/turn-batch.js';

/** What one message to the signing thread carries (signing-worker.js reads it). */
export interface Batch {
  /** The thread forgets every key it holds before reading this batch's. */
  readonly reset: boolean;
  readonly keys: readonly (readonly [number, KeyObject])[];
  readonly jobs: readonly (readonly [number, string | null, string])[];
}

type Answer = string | { error: string };

interface Job {
  readonly key: KeyObject;
  readonly digest: string | null;
  readonly input: string;
}

/** A message sent and not answered yet: settles its jobs from the thread's answers. */
interface InFlight {
  readonly answer: (answers: Answers<string>) => void;
  readonly fail: (error: Error) => void;
}

/** Keys a thread may hold before it is told to forget them all (keys change rarely). */
const MAX_KEYS = 4;

/** One thread and what it was sent: its answers can only ever settle its own jobs. */
interface Thread {
  readonly worker: Worker;
  /** The keys it holds, by the number they were sent under. */
  readonly keyIds: Map<KeyObject, number>;
  /** Messages sent and not answered yet, oldest first: the thread answers in order. */
  readonly inFlight: InFlight[];
}

/**
 * Access tokens are signed on one thread of their own, beside the event loop, on the machine's
 * second core (bench/README.md, the ledger). The signatures asked
 * for during one turn of the event loop go to it in messages of at most BATCH_AT jobs, each
 * answered as one, so the event loop pays one hand-off and one wake-up per message rather than
 * one per token (a refresh under load shares its turn with a dozen others). The thread holds each
 * private key once sent; it signs with exactly the key each job names, so which key signs stays
 * the caller's decision.
 * Referenced only while it has work: an idle thread never keeps a command from exiting.
 */
export class SigningThread {
  #thread: Thread | undefined;
  #nextKeyId = 0;
  readonly #jobs = new TurnBatch<Job, string>((jobs) => this.#send(jobs));

  /** Signs `input` (the JWS signing input) and resolves to the compact JWS. */
  sign(key: KeyObject, digest: string | null, input: string): Promise<string> {
    return this.#jobs.add({ key, digest, input });
  }

  #send(jobs: readonly Job[]): Promise<Answers<string>> {
    const thread = this.#thread ?? this.#spawn();
    const reset = thread.keyIds.size >= MAX_KEYS;
    if (reset) thread.keyIds.clear();
    const keys: [number, KeyObject][] = [];
    const batch: Batch = { reset, keys, jobs: jobs.map((job) => [this.#keyIdOf(thread, job.key, keys), job.digest, job.input] as const) };
    // Posted before it is recorded: a message that cannot be sent leaves nothing waiting for an answer.
    thread.worker.postMessage(batch);
    if (thread.inFlight.length === 0) thread.worker.ref();
    return new Promise<Answers<string>>((answer, fail) => thread.inFlight.push({ answer, fail }));
  }

  /** The number `key` is known by in `thread`, adding it to `keys` when it is new there. */
  #keyIdOf(thread: Thread, key: KeyObject, keys: [number, KeyObject][]): number {
    let id = thread.keyIds.get(key);
    if (id === undefined) {
      id = this.#nextKeyId++;
      thread.keyIds.set(key, id);
      keys.push([id, key]);
    }
    return id;
  }

  #answer(thread: Thread, answers: readonly Answer[]): void {
    const message = thread.inFlight.shift();
    if (thread.inFlight.length === 0) thread.worker.unref();
    message?.answer(answers.map((answer) => (typeof answer === 'string' ? answer : new Error(answer.error))));
  }

  /** A thread that fails takes its batches with it; the next batch starts a new one. */
  #gone(thread: Thread, error: Error): void {
    if (this.#thread === thread) this.#thread = undefined;
    for (const message of thread.inFlight.splice(0)) message.fail(error);
  }

  #spawn(): Thread {
    const worker = new Worker(new URL('./signing-worker.js', import.meta.url));
    worker.unref();
    const thread: Thread = { worker, keyIds: new Map(), inFlight: [] };
    worker.on('message', (answers: Answer[]) => this.#answer(thread, answers));
    worker.on('error', (error) => this.#gone(thread, error));
    worker.on('exit', (code) => this.#gone(thread, new Error(`the signing thread stopped (exit code ${code})`)));
    this.#thread = thread;
    return thread;
  }

  /** Stops the thread; what it had not answered is refused. */
  async close(): Promise<void> {
    const thread = this.#thread;
    if (thread === undefined) return;
    this.#gone(thread, new Error('the signing thread was closed'));
    await thread.worker.terminate();
  }
}
