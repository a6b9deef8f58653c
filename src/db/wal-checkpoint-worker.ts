import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import type { CheckpointerOptions } from './wal-checkpointer.js';

/**
 * The body of the WAL checkpointer thread (see wal-checkpointer.ts): its own connection to the
 * database file, checkpointing on a timer until the owner says stop.
 */
const options = workerData as CheckpointerOptions;
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
  try {
    const [passive] = sqlite.pragma('wal_checkpoint(PASSIVE)') as CheckpointResult[];
    // PASSIVE never waits, so under steady writes new frames keep arriving and the WAL is never
    // started over; past the limit, RESTART briefly holds writers back so that it can be.
    if (passive !== undefined && passive.log >= options.restartFrames) sqlite.pragma('wal_checkpoint(RESTART)');
  } catch {
    // Busy or locked by another process: the next round tries again.
  }
}

const timer = setInterval(checkpoint, options.intervalMs);
parentPort?.once('message', () => {
  clearInterval(timer);
  sqlite.close();
  parentPort?.close();
});
