#!/usr/bin/env node
// Paired, alternating A/B of two builds under wrk -t2 -c50, as ratios to bare node:http:
//   node bench/wrk-ab.mjs <treeA> <treeB> [pairs=3] [--db=postgres] [--seconds=5]
// Needs wrk (Debian: apt-get install wrk). Each run of a build measures bench/bare-server.mjs,
// then the real server (the `start` script's options, a fresh SQLite database, or with
// `--db=postgres` a fresh database on the server of DATABASE_URL, dropped after) in reusable mode
// (refresh, then the 422 of a truncated body) and in rotation mode; each load runs 2 s to warm up,
// then 5 s measured, or as long as `--seconds` says. It prints each run's requests per second and
// ratios to that run's bare figure, then the median over pairs of B's ratio over A's. B runs first
// in every other pair.
import process from 'node:process';
import console from 'node:console';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { URL, fileURLToPath } from 'node:url';
import { alternate, median } from './lib/pairs.mjs';
import { createBenchDatabase } from './lib/pg.mjs';
import { serverEnv, startBare, startServer, stopAllChildren, stopChild } from './lib/procs.mjs';
import * as S from './lib/scenarios.mjs';
import { WRK_CONNECTIONS, runWrk, tokensFile } from './lib/wrk.mjs';

const USAGE = 'usage: [DATABASE_URL=postgres://...] node bench/wrk-ab.mjs <treeA> <treeB> [pairs] [--db=postgres] [--seconds=5]\n';
let args;
try {
  args = parseArgs({ options: { db: { type: 'string', default: 'sqlite' }, seconds: { type: 'string', default: '5' } }, allowPositionals: true });
} catch (error) {
  process.stderr.write(`${error.message}\n${USAGE}`);
  process.exit(2);
}
const postgres = args.values.db === 'postgres';
const seconds = Number(args.values.seconds);
const [treeA, treeB, pairsArg] = args.positionals;
if (treeA === undefined || treeB === undefined || !['sqlite', 'postgres'].includes(args.values.db) || (postgres && !process.env.DATABASE_URL) || !(seconds >= 1)) {
  process.stderr.write(USAGE);
  process.exit(2);
}
const pairs = Number(pairsArg ?? 3);
const root = fileURLToPath(new URL('..', import.meta.url));
const SCENARIOS = ['refresh', 'rotation', 'invalid'];

/** Warms up, then measures. */
async function measure(url, script, env) {
  await runWrk(url, script, 2, env);
  return runWrk(url, script, seconds, env);
}

async function withServer(entry, rotation, cwd, database, work) {
  const server = await startServer({ entry, env: serverEnv(cwd, rotation, database), cwd });
  try {
    return await work(server.url);
  } finally {
    await stopChild(server.child);
  }
}

async function runOn(tree) {
  const cwd = await mkdtemp(join(os.tmpdir(), 'school-auth-wrk-'));
  const entry = join(resolve(tree), 'dist/cli/main.js');
  const database = postgres ? await createBenchDatabase(process.env.DATABASE_URL) : undefined;
  try {
    const bare = await startBare(join(root, 'bench/bare-server.mjs'), { ...process.env, RESPONSE_BYTES: '700' });
    const run = { bare: await measure(bare.url, 'bare').finally(() => stopChild(bare.child)) };
    await S.seedAdmins(entry, { env: serverEnv(cwd, false, database), cwd });
    await withServer(entry, false, cwd, database, async (url) => {
      run.refresh = await measure(url, 'refresh', { TOKENS_FILE: await tokensFile(cwd, url, 'reusable', 200) });
      run.invalid = await measure(url, 'invalid');
    });
    await withServer(entry, true, cwd, database, async (url) => {
      // The warm-up rotates its own tokens: wrk keeps the successors it was given.
      await runWrk(url, 'rotation', 2, { TOKENS_FILE: await tokensFile(cwd, url, 'warm-up', WRK_CONNECTIONS + 20) });
      run.rotation = await runWrk(url, 'rotation', seconds, { TOKENS_FILE: await tokensFile(cwd, url, 'measured', WRK_CONNECTIONS + 20) });
    });
    return run;
  } finally {
    await database?.drop();
    await rm(cwd, { recursive: true, force: true });
  }
}

const ratio = (run, scenario) => run[scenario].rps / run.bare.rps;
const refused = ({ non2xx }) => (non2xx > 0 ? `, ${non2xx} refused` : '');
const describe = (run) =>
  `bare ${run.bare.rps.toFixed(0)}/s, refresh ${run.refresh.rps.toFixed(0)}/s (${ratio(run, 'refresh').toFixed(3)}x${refused(run.refresh)}), ` +
  `rotation ${run.rotation.rps.toFixed(0)}/s (${ratio(run, 'rotation').toFixed(3)}x${refused(run.rotation)}), 422 ${run.invalid.rps.toFixed(0)}/s (${ratio(run, 'invalid').toFixed(3)}x)`;

try {
  const results = await alternate(
    pairs,
    () => runOn(treeA),
    () => runOn(treeB),
    (pair, bFirst, a, b) => console.log(`pair ${pair}${bFirst ? ' (B first)' : ''}:\n  A ${describe(a)}\n  B ${describe(b)}`),
  );
  for (const scenario of SCENARIOS) {
    const perPair = results.map(({ a, b }) => ratio(b, scenario) / ratio(a, scenario));
    const rate = median(results.map(({ a, b }) => b[scenario].rps / a[scenario].rps));
    console.log(`${scenario}: B/A ratio to bare ${perPair.map((x) => x.toFixed(3)).join(' ')}, median ${median(perPair).toFixed(3)}; B/A requests per second, median ${rate.toFixed(3)}`);
  }
} finally {
  await stopAllChildren();
}
