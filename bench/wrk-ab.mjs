#!/usr/bin/env node
// Paired, alternating A/B of two builds under wrk -t2 -c50, as ratios to bare node:http:
//   node bench/wrk-ab.mjs <treeA> <treeB> [pairs=3]
// Needs wrk (Debian: apt-get install wrk). Each run of a build measures bench/bare-server.mjs,
// then the real server (the `start` script's options, a fresh SQLite database) in reusable mode
// (refresh, then the 422 of a truncated body) and in rotation mode; each load runs 2 s to warm up,
// then 5 s measured. It prints each run's requests per second and ratios to that run's bare
// figure, then the median over pairs of B's ratio over A's. B runs first in every other pair.
import process from 'node:process';
import console from 'node:console';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { alternate, median } from './lib/pairs.mjs';
import { serverEnv, startBare, startServer, stopAllChildren, stopChild } from './lib/procs.mjs';
import * as S from './lib/scenarios.mjs';

const [treeA, treeB, pairsArg] = process.argv.slice(2);
if (treeA === undefined || treeB === undefined) {
  process.stderr.write('usage: node bench/wrk-ab.mjs <treeA> <treeB> [pairs]\n');
  process.exit(2);
}
const pairs = Number(pairsArg ?? 3);
const root = fileURLToPath(new URL('..', import.meta.url));
const THREADS = 2;
const CONNECTIONS = 50;
const SCENARIOS = ['refresh', 'rotation', 'invalid'];

async function wrk(url, script, seconds, env = {}) {
  const args = [`-t${THREADS}`, `-c${CONNECTIONS}`, `-d${seconds}s`, '-s', join(root, 'bench/wrk', `${script}.lua`), url];
  const { stdout } = await promisify(execFile)('wrk', args, { env: { ...process.env, WRK_THREADS: String(THREADS), ...env } });
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]), non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0) };
}

/** Warms up, then measures. */
async function measure(url, script, env) {
  await wrk(url, script, 2, env);
  return wrk(url, script, 5, env);
}

/** Signs in `count` times and writes the refresh tokens to a file, one per line. */
async function tokensFile(dir, url, name, count) {
  const pool = S.sessionPool();
  await S.seedSessions(url, pool, count, { workers: 4 });
  const file = join(dir, `${name}.txt`);
  await writeFile(file, `${pool.tokens.join('\n')}\n`);
  return file;
}

async function withServer(entry, rotation, cwd, work) {
  const server = await startServer({ entry, env: serverEnv(cwd, rotation), cwd });
  try {
    return await work(server.url);
  } finally {
    await stopChild(server.child);
  }
}

async function runOn(tree) {
  const cwd = await mkdtemp(join(os.tmpdir(), 'school-auth-wrk-'));
  const entry = join(resolve(tree), 'dist/cli/main.js');
  try {
    const bare = await startBare(join(root, 'bench/bare-server.mjs'), { ...process.env, RESPONSE_BYTES: '700' });
    const run = { bare: await measure(bare.url, 'bare').finally(() => stopChild(bare.child)) };
    await S.seedAdmins(entry, { env: serverEnv(cwd, false), cwd });
    await withServer(entry, false, cwd, async (url) => {
      run.refresh = await measure(url, 'refresh', { TOKENS_FILE: await tokensFile(cwd, url, 'reusable', 200) });
      run.invalid = await measure(url, 'invalid');
    });
    await withServer(entry, true, cwd, async (url) => {
      // The warm-up rotates its own tokens: wrk keeps the successors it was given.
      await wrk(url, 'rotation', 2, { TOKENS_FILE: await tokensFile(cwd, url, 'warm-up', CONNECTIONS + 20) });
      run.rotation = await wrk(url, 'rotation', 5, { TOKENS_FILE: await tokensFile(cwd, url, 'measured', CONNECTIONS + 20) });
    });
    return run;
  } finally {
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
