// @ts-check
// The signing thread (see signing-thread.ts). Plain JavaScript so that the same file runs from the
// sources (tests) and from the build.
import { Buffer } from 'node:buffer';
import { sign } from 'node:crypto';
import { parentPort } from 'node:worker_threads';

if (parentPort === null) throw new Error('signing-worker.js runs as a worker thread');
const port = parentPort;

/** The private keys the event loop has sent, by the number it gave them. */
const keys = new Map();

/**
 * One message is one batch: the keys this thread has not seen yet, then the jobs, each a key's
 * number, a digest name (null for EdDSA) and the signing input. The answer holds, in job order,
 * each compact JWS or the reason that job failed; a failing job fails alone.
 */
port.on('message', (/** @type {import('./signing-thread.js').Batch} */ batch) => {
  if (batch.reset) keys.clear();
  for (const [id, key] of batch.keys) keys.set(id, key);
  const answers = batch.jobs.map(([id, digest, input]) => {
    try {
      const key = keys.get(id);
      if (key === undefined) throw new Error(`signing key ${id} was never sent`);
      // JWS wants the raw r||s form of an ECDSA signature, not DER (RFC 7518 §3.4).
      const signature = sign(digest, Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
      return `${input}.${signature.toString('base64url')}`;
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    }
  });
  port.postMessage(answers);
});
