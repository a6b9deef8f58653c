#!/usr/bin/env node
// Paired, alternating A/B of two builds' logins under wrk -t2 (-c50 unless told), each as a share of raw argon2id:
//   node bench/login-ab.mjs <treeA> <treeB> [pairs=3] [--seconds=8] [--connections=50] [--throttle]
// `--throttle` leaves the login throttle on, as in production (elsewhere the benchmark turns it
// off: every login comes from 127.0.0.1). An attempt counts against its account and IP until
// it succeeds, and more than 5 at once for one account from one IP are refused, so with the throttle
// on run two connections per seeded admin (4 admins: `--connections=8`); a run that was refused
// logins says so.
// Each run of a build starts its server as `npm start` does (a fresh SQLite database), warms it up
// with the seeded admins' right passwords (warmUpLogins in lib/wrk.mjs), then measures; the server
// stopped, it measures @node-rs/argon2's verify() in this process at as many concurrent
// verifications as there are cores (the ceiling the login target is stated against, as in run.mjs). wrk, a C client, costs far less CPU per request than
// run.mjs's autocannon, which shares the cores with the server. B runs first in every other pair.
import process from 'node:process';
import console from 'node:console';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ARGON2_DEFAULTS, argon2Raw, makeHash } from './lib/argon2-raw.mjs';
import { alternate, median } from './lib/pairs.mjs';
import { serverEnv, startServer, stopAllChildren, stopChild } from './lib/procs.mjs';
import * as S from './lib/scenarios.mjs';
import { WRK_CONNECTIONS, loginBodiesFile, runWrk, warmUpLogins } from './lib/wrk.mjs';

const USAGE = 'usage: node bench/login-ab.mjs <treeA> <treeB> [pairs] [--seconds=8] [--connections=50] [--throttle]\n';
let args;
try {
  args = parseArgs({
    options: { seconds: { type: 'string', default: '8' }, connections: { type: 'string', default: String(WRK_CONNECTIONS) }, throttle: { type: 'boolean', default: false } },
    allowPositionals: true,
  });
} catch (error) {
  process.stderr.write(`${error.message}\n${USAGE}`);
  process.exit(2);
}
const seconds = Number(args.values.seconds);
const connections = Number(args.values.connections);
const [treeA, treeB, pairsArg] = args.positionals;
if (treeA === undefined || treeB === undefined || !(seconds >= 1) || !Number.isInteger(connections) || connections < 1) {
  process.stderr.write(USAGE);
  process.exit(2);
}
const pairs = Number(pairsArg ?? 3);
const concurrency = os.availableParallelism();
const password = 'raw-argon2-password';
const phc = await makeHash(password);

async function runOn(tree) {
  const cwd = await mkdtemp(join(os.tmpdir(), 'school-auth-login-'));
  const entry = join(resolve(tree), 'dist/cli/main.js');
  const env = { ...serverEnv(cwd, false, undefined), ...(args.values.throttle ? { LOGIN_THROTTLE: 'on' } : {}) };
  try {
    await S.seedAdmins(entry, { env, cwd });
    const server = await startServer({ entry, env, cwd });
    let logins;
    try {
      const bodies = { BODIES_FILE: await loginBodiesFile(cwd) };
      await warmUpLogins(server, bodies, connections);
      logins = await runWrk(server.url, 'login', seconds, bodies, connections);
    } finally {
      await stopChild(server.child);
    }
    const raw = await argon2Raw({ phc, password, concurrency, duration: seconds, warmup: 2 });
    return { logins, raw };
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

const share = (run) => run.logins.rps / run.raw.rps;
const describe = (run) =>
  `logins ${run.logins.rps.toFixed(1)}/s${run.logins.non2xx > 0 ? ` (${run.logins.non2xx} refused)` : ''}, raw ${run.raw.rps.toFixed(1)}/s, share ${(100 * share(run)).toFixed(1)}%`;

try {
  console.log(`argon2id m=${ARGON2_DEFAULTS.memoryCost},t=${ARGON2_DEFAULTS.timeCost},p=${ARGON2_DEFAULTS.parallelism}; raw at c=${concurrency}; wrk -c${connections}, login throttle ${args.values.throttle ? 'on' : 'off'}`);
  const results = await alternate(
    pairs,
    () => runOn(treeA),
    () => runOn(treeB),
    (pair, bFirst, a, b) => console.log(`pair ${pair}${bFirst ? ' (B first)' : ''}:\n  A ${describe(a)}\n  B ${describe(b)}`),
  );
  const pct = (values) => `${values.map((x) => (100 * x).toFixed(1)).join(' ')}, median ${(100 * median(values)).toFixed(1)}%`;
  console.log(`share of raw: A ${pct(results.map(({ a }) => share(a)))}; B ${pct(results.map(({ b }) => share(b)))}`);
  console.log(`B/A logins per second, median ${median(results.map(({ a, b }) => b.logins.rps / a.logins.rps)).toFixed(3)}`);
} finally {
  await stopAllChildren();
}
