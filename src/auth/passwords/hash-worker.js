// @ts-check
// One password-hashing thread (see hash-threads.ts). Plain JavaScript so that the same file runs
// from the sources (tests) and from the build.
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { hashSync, verifySync } from '@node-rs/argon2';

if (parentPort === null) throw new Error('hash-worker.js runs as a worker thread');
const port = parentPort;

// On Linux the nice value belongs to the calling thread: this lowers only this thread, so the
// event loop (refreshes) wins the CPU over a storm of logins, which still get every idle cycle.
try {
  setPriority(/** @type {{ nice: number }} */ (workerData).nice);
} catch {
  // Not permitted here: hashing simply runs at normal priority.
}

port.on('message', (/** @type {import('./hash-threads.js').HashJob} */ job) => {
  try {
    const result = job.kind === 'hash' ? hashSync(job.password, job.options) : verifySync(job.phc, job.password);
    port.postMessage({ result });
  } catch (error) {
    port.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
});
