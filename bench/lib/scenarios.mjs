// What each scenario sends: autocannon targets, plus the HTTP calls that seed sessions.
/* global fetch */
import { Buffer } from 'node:buffer';
import { setTimeout } from 'node:timers';
import { json, perConnection } from './load.mjs';
import { runCli } from './procs.mjs';

export const SCHOOL = 'bench-school';
export const ADMINS = [1, 2, 3, 4].map((i) => ({ username: `bench-admin-${i}`, password: `bench-password-${i}-correct-horse` }));

/** Adds SCHOOL and its ADMINS through the CLI of `entry`, as an operator would. */
export async function seedAdmins(entry, cli) {
  await runCli(entry, ['school', 'add', SCHOOL], cli);
  for (const admin of ADMINS) {
    await runCli(entry, ['admin', 'add', '--school', SCHOOL, '--username', admin.username, '--password-stdin'], { ...cli, input: `${admin.password}\n` });
  }
}

/** The login request bodies of ADMINS, with their correct passwords. */
export const loginBodies = ADMINS.map((a) => JSON.stringify({ school_id: SCHOOL, username: a.username, password: a.password }));

export async function login(url, admin) {
  const response = await fetchRetrying(`${url}/admin/auth/login`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ school_id: SCHOOL, username: admin.username, password: admin.password }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`login answered ${response.status}: ${text}`);
  return JSON.parse(text);
}

/** fetch, retried twice on a network error (not on an HTTP error status). */
async function fetchRetrying(url, init, attempts = 3) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fetch(url, init);
    } catch (error) {
      networkErrors.push(`${error.message}: ${error.cause?.code ?? error.cause?.message ?? ''}`);
      if (attempt >= attempts) throw new Error(`${init.method} ${url}: ${error.message} (${error.cause?.code ?? error.cause?.message ?? 'no cause'})`);
    }
  }
}

/** Network errors met (and retried) while seeding: reported, since they should not happen. */
export const networkErrors = [];

/**
 * Waits until the server has no password hash running or waiting (from GET /metrics): autocannon
 * and wrk drop their connections at the end of a run, but the server still finishes the logins
 * they sent, and the next run would find the hashing queue full. `server` is what startServer
 * returns; a build without a management listener (64d230b) serves /metrics on its main one.
 * Returns how long that took and how deep the queue was.
 */
export async function waitIdle(server, maxSeconds = 30) {
  const start = Date.now();
  let deepest = 0;
  let quiet = 0;
  while (Date.now() - start < maxSeconds * 1000) {
    const text = await metricsText(server);
    if (text === undefined) return { leftover_hashes: undefined, settle_ms: Date.now() - start };
    const gauge = (name) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    const busy = gauge('school_auth_password_hash_queue_depth') + gauge('school_auth_password_hash_active');
    deepest = Math.max(deepest, busy);
    quiet = busy === 0 ? quiet + 1 : 0;
    if (quiet >= 2) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { leftover_hashes: deepest, settle_ms: Date.now() - start };
}

async function metricsText({ managementUrl, url }) {
  for (const base of [managementUrl, url]) {
    const response = await fetch(`${base}/metrics`).catch(() => undefined);
    if (response?.status === 200) return response.text();
  }
  return undefined;
}

/** One POST /auth/refresh with `body` as it is: the status and the text of the answer. */
export async function postRefresh(url, body) {
  const response = await fetchRetrying(`${url}/auth/refresh`, { method: 'POST', headers: json, body });
  return { status: response.status, text: await response.text() };
}

/** One refresh, to learn the sizes the bare server must mimic. */
export async function probeRefresh(url, refreshToken) {
  const body = JSON.stringify({ refresh_token: refreshToken });
  const { status, text } = await postRefresh(url, body);
  if (status !== 200) throw new Error(`refresh answered ${status}: ${text}`);
  return { requestBytes: Buffer.byteLength(body), responseBytes: Buffer.byteLength(text), tokenLength: refreshToken.length };
}

/** Refresh tokens of real sessions, with when each session began (its idle clock starts then). */
export function sessionPool() {
  const tokens = [];
  const born = [];
  return {
    tokens,
    add(token) {
      tokens.push(token);
      born.push(Date.now());
    },
    /** Sessions last used `seconds` or more ago: their next refresh writes last_used_at. */
    idleFor(seconds) {
      const limit = Date.now() - seconds * 1000;
      return born.filter((t) => t <= limit).length;
    },
  };
}

/**
 * Signs in over HTTP until `pool` holds `count` refresh tokens (or the time is up), `workers` at a
 * time. Every login costs one argon2id verification, so this is bounded by the hash rate.
 */
export async function seedSessions(url, pool, count, { workers = 8, maxSeconds = 120, progress = () => {} } = {}) {
  const deadline = Date.now() + maxSeconds * 1000;
  let next = 0;
  let lastReport = Date.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (pool.tokens.length < count && Date.now() < deadline) {
        pool.add((await login(url, ADMINS[next++ % ADMINS.length])).refresh_token);
        if (Date.now() - lastReport > 5000) {
          lastReport = Date.now();
          progress(pool.tokens.length);
        }
      }
    }),
  );
}

const refreshRequest = { method: 'POST', path: '/auth/refresh', headers: json };

/**
 * Reusable mode: every request presents the next of many real refresh tokens (`tokens`, in
 * turn). `once`: stop after each token was used once.
 */
export function refreshTarget(url, connections, pool, { once = false } = {}) {
  let i = 0;
  return () => ({
    url,
    connections,
    ...(once ? { maxOverallRequests: pool.length } : {}),
    requests: [{ ...refreshRequest, setupRequest: (req) => ({ ...req, body: JSON.stringify({ refresh_token: pool[i++ % pool.length] }) }) }],
  });
}

/**
 * Rotation mode: connection k owns chains[k]; each 200 carries the successor token that the next
 * request of that connection presents. A refused chain counts as an error and restarts from a
 * spare session, so one failure does not turn the rest of the run into 401s.
 */
export function rotationTarget(url, connections, chains, spare) {
  return () => ({
    url,
    connections,
    setupClient: perConnection((k) => {
      const chain = chains[k % chains.length];
      return [
        {
          ...refreshRequest,
          setupRequest: (req) => ({ ...req, body: JSON.stringify({ refresh_token: chain.token }) }),
          onResponse: (status, body) => {
            if (status === 200) {
              chain.token = JSON.parse(body).refresh_token;
              return;
            }
            chain.refused += 1;
            chain.lastRefusal = `${status} ${body.slice(0, 120)}`;
            if (spare.length > 0) chain.token = spare.pop();
          },
        },
      ];
    }),
  });
}

/** Correct passwords of the seeded admins in turn; 200s hand their refresh tokens to `harvest`. */
export function loginTarget(url, connections, harvest) {
  let i = 0;
  return () => ({
    url,
    connections,
    requests: [
      {
        method: 'POST',
        path: '/admin/auth/login',
        headers: json,
        setupRequest: (req) => ({ ...req, body: loginBodies[i++ % loginBodies.length] }),
        onResponse: (status, body) => {
          if (status === 200 && harvest !== undefined) harvest(JSON.parse(body).refresh_token);
        },
      },
    ],
  });
}

// autocannon takes the path from `url` (a top-level `path` is ignored); only `requests` carry one.
export function invalidBodyTarget(url, connections) {
  return () => ({ url: `${url}/admin/auth/login`, connections, method: 'POST', headers: json, body: '{"school_id":' });
}

export function jwksTarget(url, connections) {
  return () => ({ url: `${url}/.well-known/jwks.json`, connections, method: 'GET' });
}

/** The same POST as a refresh (same body size) to the bare server. */
export function bareTarget(url, connections, tokenLength) {
  return () => ({ url: `${url}/auth/refresh`, connections, method: 'POST', headers: json, body: JSON.stringify({ refresh_token: 'x'.repeat(tokenLength) }) });
}
