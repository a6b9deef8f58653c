import { Worker } from 'node:worker_threads';

export interface CheckpointerOptions {
  readonly file: string;
  readonly synchronous: 'NORMAL' | 'FULL';
  /** How long after a write its WAL frames are copied into the database file (and synced). */
  readonly intervalMs: number;
  /** WAL length, in frames (pages), past which a checkpoint waits for writers to restart the WAL. */
  readonly restartFrames: number;
  readonly busyTimeoutMs: number;
  /** Set to 1 by the server when it writes, back to 0 by the thread when it checkpoints. */
  readonly pending: SharedArrayBuffer;
}

export interface Checkpointer {
  /** Called after each write: wakes the thread once, whatever the number of writes until it runs. */
  readonly wrote: () => void;
  stop(): Promise<void>;
}

/**
 * Runs SQLite's WAL checkpoints on a thread of their own (bench/README.md, the ledger). Left to
 * SQLite, the connection that commits the 1000th page copies the WAL into the database file and
 * syncs both, on the event loop: a stall of every request every few hundred writes. Here the copy
 * and its fsyncs happen beside the event loop, `intervalMs` after a write of this server. A quiet
 * server wakes nothing: the thread waits for a message, and a write sends one only when none is
 * pending (the shared flag), so a busy server sends at most one an interval. Writes of other processes (the CLI)
 * reach the database file with this server's next write, or by SQLite's own checkpoint.
 *
 * The worker is the compiled `wal-checkpoint-worker.js` next to this module, so this only runs
 * from the build (`dist/`).
 */
export function startCheckpointer(options: Omit<CheckpointerOptions, 'pending'>, onError: (error: Error) => void): Checkpointer {
  const pending = new SharedArrayBuffer(4);
  const flag = new Int32Array(pending);
  const worker = new Worker(new URL('./wal-checkpoint-worker.js', import.meta.url), { workerData: { ...options, pending } });
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  // A failing checkpointer must not take the server down: SQLite's own checkpoint (the fallback
  // set in connect.ts) keeps the WAL bounded without it.
  worker.on('error', onError);
  return {
    wrote: () => {
      if (Atomics.compareExchange(flag, 0, 0, 1) === 0) worker.postMessage('wrote');
    },
    stop: async () => {
      // Referenced again, or a process with nothing else left to do would exit before the
      // worker has closed its connection.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
