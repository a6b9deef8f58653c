#!/usr/bin/env node
// Paired, alternating A/B of two builds of school-auth over loopback sockets, the way npm run
// bench drives the service (the same start options, load generators and request bodies):
//   node bench/socket-ab.mjs <treeA> <treeB> <refresh|rotation|invalid> [pairs=6]
// Each run is a fresh server process on a fresh SQLite database, 50 connections, 2 s of warm-up
// and 5 s measured. It prints each run's answers per second and the server process's CPU time
// (all its threads, from /proc) per answer, then the median B/A ratios. B runs first in every
// other pair. On a shared machine the CPU per answer moves less than the rate.
import process from 'node:process';
import console from 'node:console';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { closeLoop, postRequest } from './lib/close-loop.mjs';
import { measure } from './lib/load.mjs';
import { alternate, median } from './lib/pairs.mjs';
import { serverEnv, startServer, stopAllChildren, stopChild } from './lib/procs.mjs';
import * as S from './lib/scenarios.mjs';

const [treeA, treeB, scenario, pairsArg] = process.argv.slice(2);
if (treeA === undefined || treeB === undefined || !['refresh', 'rotation', 'invalid'].includes(scenario ?? '')) {
  process.stderr.write('usage: node bench/socket-ab.mjs <treeA> <treeB> <refresh|rotation|invalid> [pairs]\n');
  process.exit(2);
}
const pairs = Number(pairsArg ?? 6);
const CONNECTIONS = 50;

/** User + system CPU time of a process, all threads, in microseconds (clock ticks of 10 ms). */
function cpuOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** The load of one scenario: a function of the seconds to run it. */
async function loadFor(server) {
  if (scenario === 'invalid') {
    const request = postRequest(server.port, '/admin/auth/login', '{"school_id":');
    return (duration) => closeLoop({ port: server.port, connections: CONNECTIONS, request, expected: [422], duration, warmup: 0 });
  }
  const sessions = S.sessionPool();
  await S.seedSessions(server.url, sessions, CONNECTIONS + 20, { workers: 4 });
  const chains = sessions.tokens.slice(0, CONNECTIONS).map((token) => ({ token, refused: 0 }));
  const target =
    scenario === 'refresh' ? S.refreshTarget(server.url, CONNECTIONS, sessions.tokens) : S.rotationTarget(server.url, CONNECTIONS, chains, sessions.tokens.slice(CONNECTIONS));
  return (duration) => measure({ target, duration, warmup: 0 });
}

async function runOn(tree) {
  const cwd = await mkdtemp(join(os.tmpdir(), 'school-auth-ab-'));
  const entry = join(resolve(tree), 'dist/cli/main.js');
  const env = serverEnv(cwd, scenario === 'rotation');
  await S.seedAdmins(entry, { env, cwd });
  const server = await startServer({ entry, env, cwd });
  try {
    const load = await loadFor(server);
    await load(2);
    const before = cpuOf(server.pid);
    const result = await load(5);
    return { rps: result.rps, cpu: (cpuOf(server.pid) - before) / Math.max(result.responses, 1), errors: result.errors };
  } finally {
    await stopChild(server.child);
    await rm(cwd, { recursive: true, force: true });
  }
}

try {
  const results = await alternate(
    pairs,
    () => runOn(treeA),
    () => runOn(treeB),
    (pair, bFirst, a, b) => {
      const errors = a.errors + b.errors > 0 ? `, errors A ${a.errors} B ${b.errors}` : '';
      console.log(`pair ${pair}${bFirst ? ' (B first)' : ''}: A ${a.rps.toFixed(0)}/s ${a.cpu.toFixed(0)} µs/answer, B ${b.rps.toFixed(0)}/s ${b.cpu.toFixed(0)} µs/answer${errors}`);
    },
  );
  const cpu = median(results.map(({ a, b }) => b.cpu / a.cpu));
  const rate = median(results.map(({ a, b }) => b.rps / a.rps));
  console.log(`${scenario}: B/A server CPU per answer, median ${cpu.toFixed(3)}; B/A answers per second, median ${rate.toFixed(3)} (${pairs} pairs)`);
} finally {
  await stopAllChildren();
}
