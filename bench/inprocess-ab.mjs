#!/usr/bin/env node
// Paired, alternating in-process A/B of two builds of school-auth on one scenario (A then B, and
// B then A in every other pair).
//   node bench/inprocess-ab.mjs <treeA> <treeB> <refresh|rotation|invalid> [pairs=5] [requests=3000]
// Each tree is a checkout with its dist/ built and node_modules/ installed. Every run is a fresh
// process on a fresh SQLite database (or, with BENCH_PG_URL, a fresh database created on that
// PostgreSQL server for the run and dropped after it), driving
// the real app through app.inject() 20 requests at a time. It prints each run's CPU time per
// request (main thread and thread pool together) and throughput, then the median B/A ratios.
import process from 'node:process';
import console from 'node:console';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import { createBenchDatabase } from './lib/pg.mjs';
import { alternate, median } from './lib/pairs.mjs';

const [treeA, treeB, scenario, pairsArg, requestsArg] = process.argv.slice(2);
if (treeA === undefined || treeB === undefined || !['refresh', 'rotation', 'invalid'].includes(scenario ?? '')) {
  process.stderr.write('usage: node bench/inprocess-ab.mjs <treeA> <treeB> <refresh|rotation|invalid> [pairs] [requests]\n');
  process.exit(2);
}
const pairs = Number(pairsArg ?? 5);
const runner = join(dirname(fileURLToPath(import.meta.url)), 'lib', 'inprocess-run.mjs');
const env = { ...process.env };

function runOn(tree, runEnv) {
  const out = execFileSync(process.execPath, [runner, resolve(tree), scenario, requestsArg ?? '3000'], { env: runEnv, encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1));
}

// The runner needs an empty database: each PostgreSQL run gets one of its own.
async function run(tree) {
  if (process.env.BENCH_PG_URL === undefined) return runOn(tree, env);
  const database = await createBenchDatabase(process.env.BENCH_PG_URL);
  try {
    return runOn(tree, { ...env, BENCH_PG_URL: database.url });
  } finally {
    await database.drop();
  }
}

const results = await alternate(
  pairs,
  () => run(treeA),
  () => run(treeB),
  (pair, bFirst, a, b) =>
    console.log(`pair ${pair}${bFirst ? ' (B first)' : ''}: A ${a.cpu_us} µs/request ${a.rate}/s, B ${b.cpu_us} µs/request ${b.rate}/s`),
);
const cpu = median(results.map(({ a, b }) => b.cpu_us / a.cpu_us));
const rate = median(results.map(({ a, b }) => b.rate / a.rate));
console.log(`${scenario}: B/A CPU per request, median ${cpu.toFixed(3)}; B/A throughput, median ${rate.toFixed(3)} (${pairs} pairs)`);
