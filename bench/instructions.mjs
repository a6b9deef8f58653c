#!/usr/bin/env node
// Instructions a request costs the server, counted by callgrind: a measure that a busy machine
// does not move (it counts work, not time), for differences smaller than wrk's noise:
//   node bench/instructions.mjs <tree> [refresh|rotation|invalid] [--warm-up=16000] [--window=4000] [--windows=5]
// Needs valgrind (Debian: apt-get install valgrind). Seeds sessions with <tree>'s own server,
// then starts it again as `npm start` does under callgrind (every thread; user space only, not
// the kernel) and sends --warm-up requests, 16 at a time, so that V8 has compiled the path, then
// --windows windows of --window requests. For each window it prints the instructions per request
// and, for the median window, what ran them (bench/lib/callgrind.mjs). V8 still compiles and
// collects now and then, so windows differ; the kinds that do neither are steadier than the sum.
// Callgrind slows the server down many times over (bench/README.md): a run takes some minutes.
import process from 'node:process';
import console from 'node:console';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { instructionsByKind } from './lib/callgrind.mjs';
import { serverEnv, startServer, stopAllChildren, stopChild } from './lib/procs.mjs';
import * as S from './lib/scenarios.mjs';

const { values, positionals } = parseArgs({
  options: { 'warm-up': { type: 'string', default: '16000' }, window: { type: 'string', default: '4000' }, windows: { type: 'string', default: '5' } },
  allowPositionals: true,
});
const [tree, scenario = 'refresh'] = positionals;
if (tree === undefined || !['refresh', 'rotation', 'invalid'].includes(scenario)) {
  process.stderr.write('usage: node bench/instructions.mjs <tree> [refresh|rotation|invalid] [--warm-up=16000] [--window=4000] [--windows=5]\n');
  process.exit(2);
}
const CONNECTIONS = 16;
const rotation = scenario === 'rotation';
const dir = await mkdtemp(join(os.tmpdir(), 'school-auth-instructions-'));
const entry = join(resolve(tree), 'dist/cli/main.js');
// valgrind names its control files after USER and HOST, and callgrind_control must find them,
// through files named with the same prefix.
const user = { USER: 'bench', LOGNAME: 'bench' };
const env = { ...serverEnv(dir, rotation), ...user };
const controlEnv = { ...process.env, ...user, HOST: '127.0.0.1' };
const vgdbPrefix = `--vgdb-prefix=${join(dir, 'vgdb')}`;

try {
  await S.seedAdmins(entry, { env, cwd: dir });
  const seeding = await startServer({ entry, env, cwd: dir });
  const pool = S.sessionPool();
  await S.seedSessions(seeding.url, pool, rotation ? CONNECTIONS * 2 : 64, { workers: 4 });
  await stopChild(seeding.child);

  const launcher = ['valgrind', '--tool=callgrind', '--smc-check=all-non-file', vgdbPrefix, `--callgrind-out-file=${join(dir, 'callgrind.out')}`];
  const server = await startServer({ entry, env, cwd: dir, launcher, readyTimeoutMs: 600_000 });
  const chains = pool.tokens.slice(0, CONNECTIONS);
  let unexpected = 0;
  const send = async (connection, n) => {
    const token = rotation ? chains[connection] : pool.tokens[n % pool.tokens.length];
    const body = scenario === 'invalid' ? '{"refresh_token": "abc' : JSON.stringify({ refresh_token: token });
    const { status, text } = await S.postRefresh(server.url, body);
    if (status !== (scenario === 'invalid' ? 422 : 200)) unexpected += 1;
    else if (rotation) chains[connection] = JSON.parse(text).refresh_token;
  };
  const load = async (requests) => {
    let next = 0;
    await Promise.all(Array.from({ length: CONNECTIONS }, async (_, connection) => {
      while (next < requests) await send(connection, next++);
    }));
  };
  /** Dumps what callgrind counted since the last dump and reads it. */
  const dump = async () => {
    execFileSync('callgrind_control', [vgdbPrefix, '--dump', String(server.pid)], { env: controlEnv, stdio: 'ignore' });
    const dumps = (await readdir(dir)).filter((name) => /^callgrind\.out\.\d+$/.test(name));
    const last = dumps.sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop())).at(-1);
    return instructionsByKind(join(dir, last));
  };
  await load(Number(values['warm-up']));
  await dump();
  const window = Number(values.window);
  const counted = [];
  for (let i = 0; i < Number(values.windows); i += 1) {
    await load(window);
    counted.push(await dump());
  }
  console.log(`${tree} ${scenario}: ${counted.map(({ total }) => (total / window).toFixed(0)).join(' ')} instructions a request, windows of ${window} after ${values['warm-up']} (${unexpected} unexpected answers)`);
  const { byKind, total } = [...counted].sort((a, b) => a.total - b.total)[Math.floor(counted.length / 2)];
  for (const [kind, cost] of [...byKind].sort((a, b) => b[1] - a[1])) {
    console.log(`  ${(cost / window).toFixed(0).padStart(8)}  ${((100 * cost) / total).toFixed(1).padStart(5)}%  ${kind}`);
  }
} finally {
  await stopAllChildren();
  await rm(dir, { recursive: true, force: true });
}
