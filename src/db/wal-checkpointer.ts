import { Worker } from 'node:worker_threads';

export interface CheckpointerOptions {
  readonly file: string;
  readonly synchronous: 'NORMAL' | 'FULL';
  /** How often committed WAL frames are copied into the database file (and synced). */
  readonly intervalMs: number;
  /** WAL length, in frames (pages), past which a checkpoint waits for writers to restart the WAL. */
  readonly restartFrames: number;
  readonly busyTimeoutMs: number;
}

export interface Checkpointer {
  stop(): Promise<void>;
}

/**
 * Runs SQLite's WAL checkpoints on a thread of their own. Left to SQLite, the connection that
 * commits the 1000th page copies the WAL into the database file and syncs both, on the event
 * loop: a stall of every request every few hundred writes. Here the copy and its fsyncs happen beside the event loop, and committed writes
 * reach the database file within `intervalMs` even when the server is quiet.
 *
 * The worker is the compiled `wal-checkpoint-worker.js` next to this module, so this only runs
 * from the build (`dist/`).
 */
export function startCheckpointer(options: CheckpointerOptions, onError: (error: Error) => void): Checkpointer {
  const worker = new Worker(new URL('./wal-checkpoint-worker.js', import.meta.url), { workerData: options });
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  // A failing checkpointer must not take the server down: SQLite's own checkpoint (the fallback
  // set in connect.ts) keeps the WAL bounded without it.
  worker.on('error', onError);
  return {
    stop: async () => {
      // Referenced again, or a process with nothing else left to do would exit before the
      // worker has closed its connection.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
