import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import type { CheckpointerOptions } from './wal-checkpointer.js';

/**
 * The body of the WAL checkpointer thread (see wal-checkpointer.ts): its own connection to the
 * database file, one checkpoint `intervalMs` after the server says it wrote, until it says stop.
 * No timer runs while nothing was written.
 */
const options = workerData as CheckpointerOptions;
const pending = new Int32Array(options.pending);
const sqlite = new SQLite(options.file);
sqlite.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
// The checkpoint syncs the WAL and the database file as this connection's setting says.
sqlite.pragma(`synchronous = ${options.synchronous}`);

interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

function checkpoint(): void {
  // Cleared first: a write from now on wakes the thread again, so no frame is left behind.
  Atomics.store(pending, 0, 0);
  try {
    const [passive] = sqlite.pragma('wal_checkpoint(PASSIVE)') as CheckpointResult[];
    // PASSIVE never waits, so under steady writes new frames keep arriving and the WAL is never
    // started over; past the limit, RESTART briefly holds writers back so that it can be.
    if (passive !== undefined && passive.log >= options.restartFrames) sqlite.pragma('wal_checkpoint(RESTART)');
  } catch {
    // Busy or locked by another process: mark it pending again, and the next round tries again.
    if (Atomics.compareExchange(pending, 0, 0, 1) === 0) schedule();
  }
}

let timer: NodeJS.Timeout | undefined;
function schedule(): void {
  timer = setTimeout(checkpoint, options.intervalMs);
}

parentPort?.on('message', (message: 'wrote' | 'stop') => {
  if (message === 'wrote') return schedule();
  clearTimeout(timer);
  sqlite.close();
  parentPort?.close();
});
