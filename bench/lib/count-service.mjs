// Instructions a request (or, idle, a second) of one server under callgrind (counted.mjs): our
// service from a tree, started as `npm start` does, or a limit of it (limit-server.mjs, or
// bare-server.mjs answering our 422). The same requests go to both.
/* global fetch */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import process from 'node:process';
import { join, resolve } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import { callgrind, CALLGRIND_USER, closedLoop, countWindows } from './counted.mjs';
import { limitTokens } from './limit-tokens.mjs';
import { serverEnv, startBare, startServer, stopAllChildren } from './procs.mjs';
import * as S from './scenarios.mjs';

const bench = fileURLToPath(new URL('..', import.meta.url));
const CONNECTIONS = 16;
/** Requests before the first window (V8 compiles the path meanwhile), and in a window. */
export const WINDOWS = {
  refresh: { warmUp: 5_000, window: 1_500 },
  rotation: { warmUp: 5_000, window: 1_500 },
  invalid: { warmUp: 5_000, window: 1_500 },
  login: { warmUp: 100, window: 30 },
  idle: { warmUp: 30, seconds: 60 },
};
/** The 422 of a truncated body, as the service answers it; the bare server answers it too. */
export const INVALID_BODY = '{"school_id":';

async function post(url, path, body) {
  const response = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: response.status, text: await response.text() };
}

/** What each connection sends in `scenario`, given the tokens the server knows; counts unexpected answers. */
function sender(url, scenario, tokens, unexpected) {
  const chains = tokens.slice(0, CONNECTIONS);
  return async (connection, n) => {
    const rotation = scenario === 'rotation';
    const [path, body, expected] =
      scenario === 'login' ? ['/admin/auth/login', S.loginBodies[n % S.loginBodies.length], 200]
      : scenario === 'invalid' ? ['/admin/auth/login', INVALID_BODY, 422]
      : ['/auth/refresh', JSON.stringify({ refresh_token: rotation ? chains[connection] : tokens[n % tokens.length] }), 200];
    const { status, text } = await post(url, path, body);
    if (status !== expected) unexpected.count += 1;
    else if (rotation) chains[connection] = JSON.parse(text).refresh_token;
  };
}

async function count(server, dump, scenario, tokens, windows) {
  const unexpected = { count: 0 };
  const load = closedLoop(CONNECTIONS, sender(server.url, scenario, tokens, unexpected));
  const result = await countWindows({ dump, pid: server.pid, load, ...WINDOWS[scenario], ...windows });
  return { ...result, unexpected: unexpected.count };
}

/** Our service of `tree` in `scenario` (refresh, rotation, invalid, login or idle). */
export async function countService(tree, scenario, windows = {}) {
  const dir = await mkdtemp(join(os.tmpdir(), 'school-auth-count-'));
  const entry = join(resolve(tree), 'dist/cli/main.js');
  const env = { ...serverEnv(dir, scenario === 'rotation'), ...CALLGRIND_USER };
  try {
    await S.seedAdmins(entry, { env, cwd: dir });
    const pool = S.sessionPool();
    if (['refresh', 'rotation'].includes(scenario)) {
      const seeding = await startServer({ entry, env, cwd: dir });
      await S.seedSessions(seeding.url, pool, 64, { workers: 4 });
      await stopAllChildren();
    }
    const { launcher, dump } = callgrind(dir);
    const server = await startServer({ entry, env, cwd: dir, launcher, readyTimeoutMs: 600_000 });
    return await count(server, dump, scenario, pool.tokens, windows);
  } finally {
    await stopAllChildren();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The limit of `scenario`: limit-server.mjs (refresh, rotation, login) or the bare 422 (invalid). */
export async function countLimit(scenario, windows = {}) {
  const dir = await mkdtemp(join(os.tmpdir(), 'school-auth-limit-'));
  const invalid = scenario === 'invalid';
  const script = join(bench, invalid ? 'bare-server.mjs' : 'limit-server.mjs');
  const env = { PATH: process.env.PATH, DATA_DIR: dir, MODE: scenario, ...CALLGRIND_USER, ...(invalid ? { ANSWER: '422' } : {}) };
  try {
    const { launcher, dump } = callgrind(dir);
    const server = await startBare(script, env, { launcher, readyTimeoutMs: 600_000 });
    return await count(server, dump, scenario, limitTokens(), windows);
  } finally {
    await stopAllChildren();
    await rm(dir, { recursive: true, force: true });
  }
}
