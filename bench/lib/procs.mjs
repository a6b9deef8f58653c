// Child processes of the benchmark: the real server, the CLI, the bare server; and their memory.
/* global fetch, AbortSignal */
import process from 'node:process';
import { clearInterval, clearTimeout, setInterval, setTimeout } from 'node:timers';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { databaseEnv } from './pg.mjs';

/** Every child still running; stopped on exit, error or Ctrl-C. */
const children = new Set();

function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

export function liveChildren() {
  return [...children];
}

/** Last resort, synchronous (for process 'exit'): SIGKILL whatever is left. */
export function killChildrenSync() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

function exited(child) {
  return child.exitCode !== null || child.signalCode !== null;
}

/** SIGTERM (the server drains and exits 0, writing its --cpu-prof profile), SIGKILL after graceMs. */
export async function stopChild(child, graceMs = 10_000) {
  if (child === undefined || exited(child)) return;
  const done = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => {
    if (!exited(child)) child.kill('SIGKILL');
  }, graceMs);
  await done;
  clearTimeout(timer);
}

export async function stopAllChildren() {
  await Promise.all(liveChildren().map((child) => stopChild(child, 5_000)));
}

/** Ports this process has handed out: a port chosen but not yet bound by its server is free again. */
const handedOut = new Set();

/**
 * A port of 127.0.0.1 nobody listens on right now, never one handed out before in this process
 * (a server's PORT and MANAGEMENT_PORT, picked in a row, could otherwise be the same port).
 */
export async function freePort() {
  for (;;) {
    const port = await anyFreePort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

function anyFreePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Keeps the last lines a child wrote, for error messages and the report. */
function tail(stream, lines, max = 40) {
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      if (line.trim() === '') continue;
      lines.count += 1;
      lines.recent.push(line);
      if (lines.recent.length > max) lines.recent.shift();
    }
  });
}

/** Runs `node <entry> ...args` to completion; rejects with its stderr on a non-zero exit. */
export function runCli(entry, args, { env, cwd, input, timeoutMs = 60_000 }) {
  return new Promise((resolve, reject) => {
    const child = track(spawn(process.execPath, [entry, ...args], { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`school-auth ${args.join(' ')} failed (${signal ?? `exit ${code}`}): ${stderr.trim() || stdout.trim()}`));
    });
    child.stdin.end(input ?? '');
  });
}

async function httpReady(url) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/**
 * What `npm start` gives the server: it runs `entry` itself, whose first line
 * (`#!/usr/bin/env -S [VAR=value ...] node <options>`) is the one place its node options are
 * written, so the benchmark runs each build with its own.
 */
async function startOptions(entry) {
  const [firstLine] = (await readFile(entry, 'utf8')).split('\n', 1);
  const words = firstLine.replace(/^#!\S*env -S\s*/, '').split(/\s+/);
  const node = words.indexOf('node');
  const env = {};
  for (const word of words.slice(0, node)) {
    const [, name, value] = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(word) ?? [];
    if (name !== undefined) env[name] = value;
  }
  return { nodeOptions: words.slice(node + 1).filter((word) => word.startsWith('--')), env };
}

/**
 * What every benchmark run sets besides `npm start`'s own: its data directory, no login throttle
 * (every login comes from 127.0.0.1), keys active at once, warnings only; and `database` (from
 * createBenchDatabase), if given.
 */
export function serverEnv(dataDir, rotation, database) {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    LOGIN_THROTTLE: 'off',
    KEY_ACTIVATION_DELAY: '0',
    REFRESH_TOKEN_ROTATION: rotation ? 'on' : 'off',
    ...databaseEnv(database),
  };
}

/**
 * Starts `entry` as `npm start` does (see startOptions), `node [start options] [--cpu-prof ...]
 * <entry> serve`, on a free port and waits for GET /readyz = 200 from it (our child must still be
 * alive then: another process could hold the port). Retries on a port race. The server it returns
 * names the start options it ran with (`start`). `launcher` (a command and its arguments, such as
 * valgrind's) runs node under it; the child is then the launcher's process.
 */
export async function startServer({ entry, env, cwd, cpuProfDir, readyTimeoutMs = 30_000, launcher = [] }) {
  const start = await startOptions(entry);
  const { nodeOptions } = start;
  env = { ...env, ...start.env };
  let lastError;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const port = await freePort();
    const managementPort = await freePort();
    const nodeArgs = [...nodeOptions, ...(cpuProfDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', cpuProfDir])];
    const [command, ...args] = [...launcher, process.execPath, ...nodeArgs, entry, 'serve'];
    const child = track(
      spawn(command, args, { env: { ...env, PORT: String(port), HOST: '127.0.0.1', MANAGEMENT_PORT: String(managementPort) }, cwd, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    const logs = { count: 0, recent: [] };
    tail(child.stdout, logs);
    tail(child.stderr, logs);
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + readyTimeoutMs;
    while (Date.now() < deadline && !exited(child)) {
      if ((await httpReady(`${url}/readyz`)) && !exited(child)) return { child, pid: child.pid, port, url, managementUrl: `http://127.0.0.1:${managementPort}`, logs, start };
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // give the exit handler time to record the status and the last log lines
    await new Promise((resolve) => setTimeout(resolve, 200));
    const status = exited(child) ? `exited with ${child.signalCode ?? child.exitCode}` : `not ready after ${readyTimeoutMs / 1000}s`;
    await stopChild(child, 2_000);
    lastError = new Error(`server ${status}; its last output:\n  ${logs.recent.join('\n  ') || '(nothing)'}`);
    if (!logs.recent.some((line) => line.includes('EADDRINUSE'))) break;
  }
  throw lastError;
}

/**
 * Starts bench/bare-server.mjs (or another script that prints "listening <port>", such as
 * limit-server.mjs), with `nodeOptions`, under `launcher` if given (valgrind's).
 */
export async function startBare(script, env, { launcher = [], nodeOptions = [], readyTimeoutMs = 10_000 } = {}) {
  const [command, ...args] = [...launcher, process.execPath, ...nodeOptions, script];
  const child = track(spawn(command, args, { env, stdio: ['ignore', 'pipe', 'inherit'] }));
  const port = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${script} did not start`)), readyTimeoutMs);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening (\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return { child, pid: child.pid, port, url: `http://127.0.0.1:${port}` };
}

/** VmRSS and VmHWM (peak RSS, cumulative over the process life) in MB, from /proc/<pid>/status. */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMB: kb('VmRSS') / 1024, hwmMB: kb('VmHWM') / 1024 };
  } catch {
    return { rssMB: NaN, hwmMB: NaN };
  }
}

/** Samples VmRSS every 250 ms until stop(), which returns the max sample and VmHWM at that moment. */
export function sampleMemory(pid) {
  let maxRss = memoryOf(pid).rssMB;
  const timer = setInterval(() => {
    const { rssMB } = memoryOf(pid);
    if (rssMB > maxRss || Number.isNaN(maxRss)) maxRss = rssMB;
  }, 250);
  return {
    stop() {
      clearInterval(timer);
      const now = memoryOf(pid);
      return { maxRssMB: Math.max(maxRss, now.rssMB), hwmMB: now.hwmMB };
    },
  };
}
