// argon2id verification in this process, without HTTP: the ceiling for login throughput.
import { URL } from 'node:url';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const require = createRequire(new URL('../../package.json', import.meta.url));
const { hash, verify } = require('@node-rs/argon2');

/** The service's default parameters (OWASP minimum): argon2id, m=19456 KiB, t=2, p=1. */
export const ARGON2_DEFAULTS = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export function makeHash(password) {
  return hash(password, ARGON2_DEFAULTS);
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** `concurrency` loops of verify() for `seconds`; verify runs on the libuv thread pool. */
async function loops(phc, password, concurrency, seconds, latencies) {
  const end = performance.now() + seconds * 1000;
  let failures = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const start = performance.now();
        if (!(await verify(phc, password))) failures += 1;
        latencies?.push(performance.now() - start);
      }
    }),
  );
  return failures;
}

export async function argon2Raw({ phc, password, concurrency, duration, warmup }) {
  if (warmup > 0) await loops(phc, password, concurrency, warmup);
  const latencies = [];
  const start = performance.now();
  const failures = await loops(phc, password, concurrency, duration, latencies);
  const seconds = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    rps: (latencies.length - failures) / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors: failures,
    responses: latencies.length,
    seconds,
    concurrency,
  };
}
