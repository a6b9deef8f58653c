#!/usr/bin/env node
// Load benchmark of the real service: see bench/README.md. `node bench/run.mjs --help`.
import process from 'node:process';
import { setTimeout } from 'node:timers';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import { parseOptions } from './lib/args.mjs';
import { ARGON2_DEFAULTS, argon2Raw, makeHash } from './lib/argon2-raw.mjs';
import { closeLoop, postRequest } from './lib/close-loop.mjs';
import { measure, measureTogether, stopLoad } from './lib/load.mjs';
import { createBenchDatabase } from './lib/pg.mjs';
import { killChildrenSync, memoryOf, sampleMemory, serverEnv, startBare, startServer, stopAllChildren, stopChild } from './lib/procs.mjs';
import { buildReport, machine, writeResults } from './lib/report.mjs';
import * as S from './lib/scenarios.mjs';

// verify() of @node-rs/argon2 runs on the libuv pool (4 threads by default); set before first use.
process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, os.availableParallelism()));

const root = fileURLToPath(new URL('..', import.meta.url));
// `--targets [targets.mjs options]`: the targets of bench/README.md on this checkout instead.
if (process.argv.includes('--targets')) {
  const args = process.argv.slice(2).filter((arg) => arg !== '--targets');
  const { status } = spawnSync(process.execPath, [join(root, 'bench/targets.mjs'), root, ...args], { stdio: 'inherit' });
  process.exit(status ?? 1);
}
const resultsDir = new URL('./results/', import.meta.url);
const started = Date.now();
const log = (message) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${message}\n`);

let options;
try {
  options = parseOptions(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`bench: ${error.message}\n`);
  process.exit(2);
}
const entry = resolve(root, options.entry);
if (!existsSync(entry)) {
  process.stderr.write(`bench: ${entry} not found; run npm run build first\n`);
  process.exit(2);
}
const want = (name) => options.only.has(name);
const C = options.connections;
const stormLogin = Math.max(1, Math.round(C * 0.4));
const rawConcurrencies = [...new Set([1, 2, os.availableParallelism()])].sort((a, b) => a - b);

// ---- cleanup, whatever happens -------------------------------------------------------------
let tmp;
let database;
let cleaning;
let interrupted = false;
function cleanup() {
  cleaning ??= (async () => {
    stopLoad();
    await stopAllChildren();
    await database?.drop().catch((error) => log(`could not drop database ${database.name}: ${error.message}`));
    if (tmp) await rm(tmp, { recursive: true, force: true });
  })();
  return cleaning;
}
process.on('exit', killChildrenSync);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    interrupted = true;
    log(`${signal}: stopping`);
    cleanup().finally(() => process.exit(130));
  });
}
// bare: three samples under each of its two generators
const scenarioCount = [...options.only].length + (want('argon2-raw') ? rawConcurrencies.length - 1 : 0) + (want('bare') ? 5 : 0);
const budgetSeconds = 240 + scenarioCount * (options.duration + options.warmup + 8);
setTimeout(() => {
  log(`time limit of ${budgetSeconds}s exceeded: stopping`);
  cleanup().finally(() => process.exit(1));
}, budgetSeconds * 1000).unref();

// ---- the run --------------------------------------------------------------------------------
const scenarios = {};
const serverHwm = []; // VmHWM of the service after each of its scenarios
const setup = {};

/** Runs one scenario while sampling the memory of `proc`; stores its row(s). */
async function scenario(name, proc, run, what = `${options.warmup}s warm-up + ${options.duration}s`) {
  log(`${name}: ${what}`);
  if (proc?.logs) await S.waitIdle(proc); // nothing left over from the previous scenario
  const sampler = proc === undefined ? undefined : sampleMemory(proc.pid);
  const logsBefore = proc?.logs?.count ?? 0;
  const rows = await run();
  const mem = sampler?.stop() ?? {};
  if (proc?.logs && Number.isFinite(mem.hwmMB)) serverHwm.push(mem.hwmMB); // the service, not the bare server
  const logLines = (proc?.logs?.count ?? 0) - logsBefore;
  for (const [rowName, row] of Object.entries(Array.isArray(rows) ? Object.fromEntries(rows) : { [name]: rows })) {
    scenarios[rowName] = { ...row, ...mem, server_log_lines: proc?.logs ? logLines : undefined };
    const r = scenarios[rowName];
    log(`  ${rowName}: ${r.rps.toFixed(1)}/s p50 ${r.p50?.toFixed(2)} ms p99 ${r.p99?.toFixed(2)} ms errors ${r.errors}${mem.hwmMB ? ` VmHWM ${mem.hwmMB.toFixed(0)} MB` : ''}`);
  }
  const leftover = Object.values(scenarios).find((r) => r.leftover_hashes > 0 && r === scenarios[name]);
  if (leftover) log(`  after the warm-up, the server still had ${leftover.leftover_hashes} password hashes to do for connections already gone (${leftover.settle_ms} ms)`);
  if (logLines > 0) log(`  server wrote ${logLines} log lines (LOG_LEVEL=warn); last: ${proc.logs.recent.at(-1).slice(0, 300)}`);
}

function benchEnv(rotation) {
  return serverEnv(tmp, rotation, database);
}

async function startService(rotation) {
  const cpuProfDir = options.cpuProf ? join(root, 'bench/results/profiles') : undefined;
  if (cpuProfDir) await mkdir(cpuProfDir, { recursive: true });
  const server = await startServer({ entry, env: benchEnv(rotation), cwd: tmp, cpuProfDir });
  const { nodeOptions, env } = server.start;
  setup.server_node_options = nodeOptions.join(' ');
  setup.server_start_env = env;
  const rss = memoryOf(server.pid).rssMB;
  setup[`server_rss_after_start_mb_rotation_${rotation ? 'on' : 'off'}`] = rss;
  log(`server pid ${server.pid} on ${server.url} (${Object.entries(env).map(([name, value]) => `${name}=${value} `).join('')}node ${[...nodeOptions, 'dist/cli/main.js'].join(' ')}), REFRESH_TOKEN_ROTATION=${rotation ? 'on' : 'off'}, RSS ${rss.toFixed(0)} MB when ready`);
  return server;
}

async function main() {
  const m = machine();
  tmp = await mkdtemp(join(os.tmpdir(), 'school-auth-bench-'));
  const serverScenarios = ['refresh', 'refresh-rotation', 'login', 'invalid-body', 'jwks', 'login-storm', 'bare'].filter(want);
  const sessions = S.sessionPool();
  const pool = sessions.tokens;

  if (serverScenarios.length > 0) {
    if (options.db === 'postgres') {
      database = await createBenchDatabase(process.env.DATABASE_URL);
      log(`created PostgreSQL database ${database.name}`);
    }
    let t = Date.now();
    const cli = { env: benchEnv(false), cwd: tmp };
    await S.seedAdmins(entry, cli);
    setup.cli_seed_seconds = (Date.now() - t) / 1000;
    log(`seeded 1 school, ${S.ADMINS.length} admins through the CLI in ${setup.cli_seed_seconds.toFixed(1)}s`);

    // ---- phase A: reusable refresh tokens --------------------------------------------------
    const server = await startService(false);
    server.sessions = sessions;
    const first = await S.login(server.url, S.ADMINS[0]);
    sessions.add(first.refresh_token);
    Object.assign(setup, await S.probeRefresh(server.url, first.refresh_token));
    log(`refresh: request body ${setup.requestBytes} B, response body ${setup.responseBytes} B`);
    const poolTarget = want('refresh') || want('login-storm') ? options.sessions : want('refresh-rotation') ? C + 20 : 1;
    const harvest = (token) => pool.length < poolTarget && sessions.add(token);

    if (want('login')) await scenario('login', server, () => measure({ target: S.loginTarget(server.url, C, harvest), ...timing(server) }));
    await S.waitIdle(server);
    t = Date.now();
    const before = pool.length;
    if (pool.length < poolTarget) log(`signing in over HTTP until there are ${poolTarget} sessions (${pool.length} so far)`);
    await S.seedSessions(server.url, sessions, poolTarget, { progress: (n) => log(`  ${n} sessions`) });
    setup.sessions = pool.length;
    setup.session_seed_seconds = (Date.now() - t) / 1000;
    setup.session_seed_logins_per_second = (pool.length - before) / Math.max(setup.session_seed_seconds, 0.001);
    if (pool.length > before) log(`  ${pool.length} sessions (${setup.session_seed_logins_per_second.toFixed(1)} logins/s while seeding)`);

    if (want('bare')) await measureBare();

    if (want('refresh')) {
      // The first refresh of a session idle for 60 s or more also writes its last_used_at (once a
      // minute at most): measured on its own, each token once, so the main run is steady-state.
      const idle = sessions.idleFor(60);
      await scenario('refresh (first use)', server, async () => ({ ...(await prime(server)), sessions: pool.length, sessions_idle_60s: idle }), 'every session once');
      const used = scenarios['refresh (first use)'].responses;
      log(`  (${idle} of those ${pool.length} sessions had been idle for 60 s or more: a touch write each${used < pool.length ? `; only ${used} were reached` : ''})`);
      await scenario('refresh', server, () => measure({ target: S.refreshTarget(server.url, C, pool), ...timing(server) }));
    }
    if (want('login-storm')) {
      // keep the refreshes of the storm on the read path, as in the refresh scenario
      if (sessions.primedAt === undefined || Date.now() + (options.warmup + options.duration + 10) * 1000 - sessions.primedAt > 60_000) {
        log('login-storm: first using every session once, so that the storm does not also pay the idle-clock writes');
        await prime(server);
      }
      await scenario('login-storm', server, async () => {
        const [logins, refreshes] = await measureTogether({
          targets: [{ target: S.loginTarget(server.url, stormLogin) }, { target: S.refreshTarget(server.url, C - stormLogin, pool) }],
          ...timing(server),
        });
        return [
          ['login-storm: login', logins],
          ['login-storm: refresh', refreshes],
        ];
      });
    }
    if (want('invalid-body')) {
      // the 422 closes the connection: autocannon would mistime it (see lib/close-loop.mjs)
      const request = postRequest(server.port, '/admin/auth/login', '{"school_id":');
      await scenario('invalid-body', server, () => closeLoop({ port: server.port, connections: C, request, expected: [422], ...timing() }));
    }
    if (want('jwks')) await scenario('jwks', server, () => measure({ target: S.jwksTarget(server.url, C), ...timing(server) }));
    await stopChild(server.child);
    setup.seed_network_errors = S.networkErrors;
    setup.server_log_tail_reusable = server.logs.recent.slice(-3).map((line) => line.slice(0, 400));

    // ---- phase B: rotating refresh tokens --------------------------------------------------
    if (want('refresh-rotation')) {
      const rotating = await startService(true);
      const chains = pool.slice(0, C).map((token) => ({ token, refused: 0 }));
      const spare = pool.slice(C, C + 200);
      await scenario('refresh-rotation', rotating, () => measure({ target: S.rotationTarget(rotating.url, C, chains, spare), ...timing(rotating) }));
      const refused = chains.filter((c) => c.refused > 0);
      scenarios['refresh-rotation'].chains_refused = refused.length;
      if (refused.length > 0) log(`  ${refused.length} chains were refused, e.g. ${refused[0].lastRefusal}`);
      await stopChild(rotating.child);
      setup.server_log_tail_rotation = rotating.logs.recent.slice(-3).map((line) => line.slice(0, 400));
    }
  }

  if (want('bare')) await measureBare();

  // ---- argon2id in this process, with no server running -------------------------------------
  if (want('argon2-raw')) {
    const password = S.ADMINS[0].password;
    const phc = await makeHash(password);
    for (const concurrency of rawConcurrencies) {
      await scenario(`argon2-raw c=${concurrency}`, undefined, () => argon2Raw({ phc, password, concurrency, ...timing() }));
    }
    scenarios['argon2-raw'] = scenarios[`argon2-raw c=${os.availableParallelism()}`];
  }

  // ---- the ceiling: bare node:http, third sample -------------------------------------------
  if (want('bare')) {
    await measureBare();
    Object.assign(scenarios, medianBare());
  }

  // ---- report -----------------------------------------------------------------------------
  m.loadavg_at_end = os.loadavg().map((x) => Number(x.toFixed(2)));
  const raw = rawConcurrencies.map((c) => `argon2-raw c=${c}`);
  const order = ['refresh (first use)', 'refresh', 'refresh-rotation', 'login', ...raw, 'invalid-body', 'jwks', 'login-storm: login', 'login-storm: refresh', 'bare', 'bare (raw sockets)'];
  const notes = [
    'req/s counts expected answers only (200; 422 for invalid-body); errors = any other status + socket errors and timeouts.',
    '% of bare: of the bare node:http server under the same load generator (autocannon; raw sockets for invalid-body).',
    'peak RSS MB = the largest VmRSS of the server process, sampled every 250 ms during the scenario; VmHWM = its peak RSS since it started (cumulative). argon2-raw runs in the bench process: no server to measure.',
    `refresh (first use): each of the ${setup.sessions ?? '?'} sessions refreshed once; a session idle for 60 s or more also writes its last_used_at. refresh: the same tokens again (read path).`,
    `login-storm: ${stormLogin} connections of logins + ${C - stormLogin} of refreshes at once; its refresh p99 is compared with the refresh scenario (${C} connections).`,
    `argon2-raw: verify() of @node-rs/argon2 in the bench process, m=${ARGON2_DEFAULTS.memoryCost},t=${ARGON2_DEFAULTS.timeCost},p=${ARGON2_DEFAULTS.parallelism}; c = concurrent verifications; the login target uses c=${os.availableParallelism()}.`,
    `bare: node:http answering ${setup.responseBytes ?? '?'} B of JSON to a ${setup.requestBytes ?? '?'} B POST, as the real refresh; ` +
      `the median of ${bareSamples.length} samples taken across the run (${scenarios.bare?.samples_rps?.join(', ') ?? '-'} req/s; raw sockets ${scenarios['bare (raw sockets)']?.samples_rps?.join(', ') ?? '-'}).`,
  ];
  const serverPeakMB = serverHwm.length > 0 ? Math.max(...serverHwm) : undefined;
  const report = buildReport({ scenarios, order, serverPeakMB, setup, machine: m, options, notes });
  process.stdout.write(`\n${report.text}\n`);
  await writeResults(resultsDir, report.json, report.markdown);
  log(`wrote bench/results/latest.json and latest.md in ${((Date.now() - started) / 1000).toFixed(0)}s`);
}

const bareSamples = [];

/**
 * One sample of the machine's limit: the bare server under autocannon, and under the raw-socket
 * generator when invalid-body runs. The limit moves during a run on a shared machine, so it is
 * sampled three times, spread over the run, and the median sample is the ceiling.
 */
async function measureBare() {
  const bare = await startBare(fileURLToPath(new URL('./bare-server.mjs', import.meta.url)), {
    PATH: process.env.PATH,
    RESPONSE_BYTES: String(setup.responseBytes),
  });
  const k = bareSamples.length + 1;
  await scenario(`bare, sample ${k}`, bare, () => measure({ target: S.bareTarget(bare.url, C, setup.tokenLength), ...timing() }));
  if (want('invalid-body')) {
    // the same generator as invalid-body, so that its ratio compares like with like
    const request = postRequest(bare.port, '/auth/refresh', JSON.stringify({ refresh_token: 'x'.repeat(setup.tokenLength) }));
    await scenario(`bare (raw sockets), sample ${k}`, bare, () => closeLoop({ port: bare.port, connections: C, request, ...timing() }));
  }
  bareSamples.push({ autocannon: scenarios[`bare, sample ${k}`], raw: scenarios[`bare (raw sockets), sample ${k}`] });
  delete scenarios[`bare, sample ${k}`];
  delete scenarios[`bare (raw sockets), sample ${k}`];
  await stopChild(bare.child);
}

/** The rows `bare` and `bare (raw sockets)`: the median sample of each, with every sample's rate. */
function medianBare() {
  const rows = {};
  for (const [key, name] of [['autocannon', 'bare'], ['raw', 'bare (raw sockets)']]) {
    const samples = bareSamples.map((sample) => sample[key]).filter(Boolean);
    if (samples.length === 0) continue;
    const sorted = [...samples].sort((a, b) => a.rps - b.rps);
    rows[name] = { ...sorted[Math.floor((sorted.length - 1) / 2)], samples_rps: samples.map((sample) => Math.round(sample.rps)) };
    log(`  ${name}: median of ${samples.length} samples (${rows[name].samples_rps.join(', ')} req/s): ${rows[name].rps.toFixed(0)}`);
  }
  return rows;
}

/** Uses every session of the pool once (each token once, bounded by warm-up + duration). */
async function prime(server) {
  const start = Date.now();
  const pool = server.sessions.tokens;
  const result = await measure({ target: S.refreshTarget(server.url, C, pool, { once: true }), duration: options.duration + options.warmup, warmup: 0 });
  if (result.responses >= pool.length) server.sessions.primedAt = start;
  return result;
}

/** Durations, and for the service: let it finish what the warm-up left behind before measuring. */
function timing(server) {
  return { duration: options.duration, warmup: options.warmup, settle: server && (() => S.waitIdle(server)) };
}

try {
  await main();
  await cleanup();
  process.exit(0);
} catch (error) {
  if (!interrupted) log(`failed: ${error.stack ?? error.message}`);
  await cleanup();
  process.exit(interrupted ? 130 : 1);
}
