#!/usr/bin/env node
// CPU profile of the server's main thread under wrk load (what speed work starts from):
//   node bench/profile.mjs <tree> <refresh|rotation|invalid|login> <outDir> [seconds=8]
// Starts <tree>'s server as `npm start` does with --cpu-prof, loads it with wrk -t2 -c50 and
// prints the heaviest functions by self time, and totals by package, per request answered, from
// the samples taken during the measured seconds only (start-up, seeding and warm-up left out).
// With outDir `--threads` it profiles nothing and prints instead each server thread's CPU time
// (from /proc) per request over the measured seconds, and how much of it was in the kernel.
// `--after-refresh` first loads the same server with refreshes for 7 s, as wrk-ab.mjs does before
// its 422: a server's state after a load is part of what the next load measures.
// `--db=postgres` runs the server on a fresh database on the server of DATABASE_URL (dropped after);
// with `--threads` it also prints the CPU time of this machine's PostgreSQL processes per request,
// the server's connections apart from each kind of background process.
import process from 'node:process';
import console from 'node:console';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { createBenchDatabase } from './lib/pg.mjs';
import { serverEnv, startServer, stopChild } from './lib/procs.mjs';
import * as S from './lib/scenarios.mjs';
import { loginBodiesFile, runWrk, tokensFile, warmUpLogins } from './lib/wrk.mjs';

const afterRefresh = process.argv.includes('--after-refresh');
const postgres = process.argv.includes('--db=postgres');
const [tree, scenario, outDir, secondsArg] = process.argv.slice(2).filter((arg) => arg !== '--after-refresh' && arg !== '--db=postgres');
const rotation = scenario === 'rotation';
// A rotation server would take the reusable refresh load for token theft and end its sessions.
if (tree === undefined || scenario === undefined || outDir === undefined || (afterRefresh && rotation) || (postgres && !process.env.DATABASE_URL)) {
  process.stderr.write('usage: [DATABASE_URL=postgres://...] node bench/profile.mjs <tree> <refresh|rotation|invalid|login> <outDir|--threads> [seconds] [--after-refresh, not with rotation] [--db=postgres]\n');
  process.exit(2);
}
const seconds = Number(secondsArg ?? 8);

/** CPU time (ticks of 10 ms) of each thread of a process, in all and in the kernel, by thread id. */
function threadTicks(pid) {
  const ticks = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks.set(tid, { all: Number(fields[11]) + Number(fields[12]), kernel: Number(fields[12]) });
  }
  return ticks;
}

/** CPU ticks of every process named postgres on this machine, by what it does: its connections, its background workers. */
function postgresTicks() {
  const ticks = new Map();
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const kind = title.includes('school_auth_bench_') ? 'connections' : title.replace(/^postgres: /, '').replace(/ worker.*$/, '').trim();
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks.set(kind, (ticks.get(kind) ?? 0) + Number(fields[11]) + Number(fields[12]));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return ticks;
}

const threads = outDir === '--threads';
// V8 stamps a profile's samples, and process.hrtime reads, the same monotonic clock, in every process.
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
let measuredFrom;
let measuredTo;
const cwd = await mkdtemp(join(os.tmpdir(), 'school-auth-prof-'));
const entry = join(resolve(tree), 'dist/cli/main.js');
const database = postgres ? await createBenchDatabase(process.env.DATABASE_URL) : undefined;
const env = serverEnv(cwd, rotation, database);
let server;
let requests;
let non2xx;
try {
  await S.seedAdmins(entry, { env, cwd });
  server = await startServer({ entry, env, cwd, cpuProfDir: threads ? undefined : resolve(outDir) });
  const count = rotation ? 70 : 200;
  // A login posts the seeded admins' passwords; the others present tokens of sessions signed in here first.
  const input = async (name) => (scenario === 'login' ? { BODIES_FILE: await loginBodiesFile(cwd) } : { TOKENS_FILE: await tokensFile(cwd, server.url, name, count) });
  if (afterRefresh) {
    const refreshTokens = { TOKENS_FILE: await tokensFile(cwd, server.url, 'before', 200) };
    await runWrk(server.url, 'refresh', 2, refreshTokens);
    await runWrk(server.url, 'refresh', 5, refreshTokens);
  }
  if (scenario === 'login') await warmUpLogins(server, await input('warm'));
  else await runWrk(server.url, scenario, 2, await input('warm'));
  const measured = await input('measured');
  const before = threadTicks(server.child.pid);
  const postgresBefore = postgres ? postgresTicks() : new Map();
  measuredFrom = monotonicUs();
  ({ requests, non2xx } = await runWrk(server.url, scenario, seconds, measured));
  measuredTo = monotonicUs();
  if (threads) {
    const usOf = (ticks) => (ticks * 10_000) / requests;
    const postgresUs = postgres ? [...postgresTicks()].map(([kind, all]) => [kind, usOf(all - (postgresBefore.get(kind) ?? 0))]) : [];
    const perRequest = [...threadTicks(server.child.pid)].map(([tid, { all, kernel }]) => {
      const start = before.get(tid) ?? { all: 0, kernel: 0 };
      return { tid, us: usOf(all - start.all), kernelUs: usOf(kernel - start.kernel) };
    });
    const total = perRequest.reduce((sum, { us }) => sum + us, 0);
    console.log(`${tree}: ${requests} requests in ${seconds}s (${Math.round(requests / seconds)}/s, ${non2xx} not 2xx), CPU per request ${total.toFixed(1)} µs`);
    for (const { tid, us, kernelUs } of perRequest.filter(({ us }) => us >= 0.5).sort((a, b) => b.us - a.us)) {
      console.log(`${us.toFixed(1).padStart(8)} µs  thread ${tid} (${kernelUs.toFixed(1)} µs in the kernel)`);
    }
    for (const [kind, us] of postgresUs.filter(([, us]) => us >= 0.5)) console.log(`${us.toFixed(1).padStart(8)} µs  PostgreSQL: ${kind}`);
  }
} finally {
  if (server !== undefined) await stopChild(server.child);
  await database?.drop();
  await rm(cwd, { recursive: true, force: true });
}
if (threads) process.exit(0);
// CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread.
const file = (await readdir(outDir)).filter((name) => /\.\d+\.0\.\d+\.cpuprofile$/.test(name)).sort().at(-1);
const profile = JSON.parse(await readFile(join(outDir, file), 'utf8'));
const selfUs = new Map();
const dt = new Map();
let sampledAt = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  sampledAt += profile.timeDeltas[i] ?? 0;
  if (sampledAt < measuredFrom || sampledAt > measuredTo) continue;
  dt.set(profile.samples[i], (dt.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
if (dt.size === 0) throw new Error('no sample of the profile falls within the measured seconds');
const byName = new Map();
const byPackage = new Map();
for (const node of profile.nodes) {
  const us = dt.get(node.id) ?? 0;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/dist\//, 'dist/');
  const key = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
  byName.set(key, (byName.get(key) ?? 0) + us);
  const pkg = url === '' ? functionName : url.startsWith('node:') ? 'node:internal' : url.includes('node_modules/') ? url.replace(/^.*node_modules\/((@[^/]+\/)?[^/]+).*$/, '$1') : url.includes('/dist/') ? 'school-auth' : 'other';
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
  selfUs.set(node.id, us);
}
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
const idle = byPackage.get('(idle)') ?? 0;
console.log(`${file}: ${requests} requests in ${seconds}s (${Math.round(requests / seconds)}/s, ${non2xx} not 2xx), sampled ${(total / 1e6).toFixed(1)} s, idle ${(idle / 1e6).toFixed(1)} s`);
console.log(`main thread busy per request (the measured ${seconds} s): ${((total - idle) / requests).toFixed(1)} µs`);
const show = (map, n) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n).forEach(([k, v]) => console.log(`${(v / requests).toFixed(2).padStart(8)} µs  ${k}`));
console.log('-- by package'); show(byPackage, 15);
console.log('-- by function'); show(byName, 40);
