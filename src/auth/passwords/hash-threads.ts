import { Worker } from 'node:worker_threads';
import type { Options } from '@node-rs/argon2';

export type HashJob =
  | { readonly kind: 'hash'; readonly password: string; readonly options: Options }
  | { readonly kind: 'verify'; readonly phc: string; readonly password: string };

type Reply = { result: string | boolean; error?: undefined } | { error: string };

/** How much lower than the event loop the hashing threads run (a Linux nice value). */
const HASHING_NICE = 10;

/**
 * argon2id on threads of its own, at most one job per thread (the caller's WorkQueue bounds how
 * many run at once, and so how many threads exist). Not the libuv pool: its one thread also reads
 * files, and here hashing runs below the event loop's priority, so in a login storm
 * refreshes keep their latency while logins take the idle CPU (README, Performance).
 */
export class HashThreads {
  private readonly idle: Worker[] = [];
  private readonly all = new Set<Worker>();

  /** Threads started and not stopped. */
  get size(): number {
    return this.all.size;
  }

  async hash(password: string, options: Options): Promise<string> {
    return String(await this.run({ kind: 'hash', password, options }));
  }

  /** Rejects when `phc` is not a hash the library can read. */
  async verify(phc: string, password: string): Promise<boolean> {
    return (await this.run({ kind: 'verify', phc, password })) === true;
  }

  private run(job: HashJob): Promise<string | boolean> {
    const worker = this.idle.pop() ?? this.spawn();
    // Referenced while it works: a command waiting for its hash must not exit in the meantime.
    worker.ref();
    return new Promise((resolve, reject) => {
      const onReply = (reply: Reply) => {
        stopListening();
        worker.unref();
        this.idle.push(worker);
        if (reply.error !== undefined) reject(new Error(reply.error));
        else resolve(reply.result);
      };
      // A thread that dies (or is stopped by close) takes its job with it; spawn() forgets the thread.
      const onGone = (error?: unknown) => {
        stopListening();
        reject(error instanceof Error ? error : new Error('the hashing thread stopped'));
      };
      const stopListening = () => {
        worker.off('message', onReply);
        worker.off('error', onGone);
        worker.off('exit', onGone);
      };
      worker.on('message', onReply);
      worker.on('error', onGone);
      worker.on('exit', onGone);
      worker.postMessage(job);
    });
  }

  async close(): Promise<void> {
    const workers = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private spawn(): Worker {
    const worker = new Worker(new URL('./hash-worker.js', import.meta.url), { workerData: { nice: HASHING_NICE } });
    this.all.add(worker);
    // A job's own listeners report a failure to its caller; an idle thread that fails only ends,
    // and must neither crash the process (an 'error' nobody listens to) nor be handed a job.
    worker.on('error', () => undefined);
    worker.once('exit', () => {
      this.all.delete(worker);
      const index = this.idle.indexOf(worker);
      if (index >= 0) this.idle.splice(index, 1);
    });
    return worker;
  }
}
