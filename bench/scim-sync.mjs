#!/usr/bin/env node
// A directory's initial sync by SCIM, as Microsoft Entra sends it, and what it does to refreshes:
//   node bench/scim-sync.mjs [--users=2000] [--workers=4] [--seconds=8] [--db sqlite|postgres]
// For each user Entra asks `GET /Users?filter=userName eq "..."`, finds nothing, then POSTs the
// user; `--workers` users are in flight at once. The run, on one server started as `npm start`
// does (dist/ must be built): refreshes alone for `--seconds`; the sync alone (its wall time); the
// same sync of as many other users again with refreshes at the same time. Printed: the sync's time
// and rate, and refreshes a second alone and during the sync (the ratio within one run is what
// holds on a shared machine). A 429 (the per-token throttle) is waited out as its Retry-After says.
/* global fetch */
import process from 'node:process';
import console from 'node:console';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout } from 'node:timers';
import { parseArgs } from 'node:util';
import { json, measure } from './lib/load.mjs';
import { createBenchDatabase } from './lib/pg.mjs';
import { runCli, serverEnv, startServer, stopAllChildren } from './lib/procs.mjs';
import { ADMINS, SCHOOL, login, seedAdmins } from './lib/scenarios.mjs';

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '2000' },
    workers: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '8' },
    db: { type: 'string', default: 'sqlite' },
  },
});
const users = Number(values.users);
const workers = Number(values.workers);
const seconds = Number(values.seconds);
const entry = resolve('dist/cli/main.js');

let throttled = 0;

/** fetch, waiting out a 429's Retry-After as a directory does. */
async function send(url, init) {
  for (;;) {
    const response = await fetch(url, init);
    if (response.status !== 429) return response;
    throttled += 1;
    await response.arrayBuffer();
    await new Promise((done) => setTimeout(done, Number(response.headers.get('retry-after') ?? '1') * 1000));
  }
}

/** One user's Entra sequence: the probe by userName, then the create. */
async function provision(url, token, userName) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' };
  const filter = encodeURIComponent(`userName eq "${userName}"`);
  const found = await send(`${url}/scim/v2/Users?filter=${filter}`, { headers });
  const list = await found.json();
  if (found.status !== 200 || list.totalResults !== 0) throw new Error(`probe for ${userName}: ${found.status} ${JSON.stringify(list)}`);
  const body = {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User', 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
    externalId: userName.split('@')[0],
    userName,
    active: true,
    displayName: userName,
    emails: [{ primary: true, type: 'work', value: userName }],
    name: { givenName: 'Bench', familyName: userName.split('@')[0] },
    'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Bench' },
  };
  const created = await send(`${url}/scim/v2/Users`, { method: 'POST', headers, body: JSON.stringify(body) });
  if (created.status !== 201) throw new Error(`create ${userName}: ${created.status} ${await created.text()}`);
  await created.arrayBuffer();
}

/** Provisions users `from` .. `from + users - 1` with `workers` in flight; the wall time in seconds. */
async function sync(url, token, from) {
  const start = process.hrtime.bigint();
  let next = from;
  const worker = async () => {
    while (next < from + users) await provision(url, token, `user${next++}@district.example`);
  };
  await Promise.all(Array.from({ length: workers }, worker));
  return Number(process.hrtime.bigint() - start) / 1e9;
}

const dataDir = await mkdtemp(join(os.tmpdir(), 'school-auth-scim-bench-'));
const database = values.db === 'postgres' ? await createBenchDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres') : undefined;
try {
  const env = serverEnv(dataDir, false, database);
  const cli = { env, cwd: dataDir };
  await seedAdmins(entry, cli);
  const printed = await runCli(entry, ['scim', 'token', 'create', '--school', SCHOOL], cli);
  const token = printed.trim().split('\n').at(-1);
  const server = await startServer({ entry, env, cwd: dataDir });
  const { refresh_token } = await login(server.url, ADMINS[0]);
  const refresh = () => ({ url: `${server.url}/auth/refresh`, method: 'POST', headers: json, body: JSON.stringify({ refresh_token }), connections: 10 });
  const alone = await measure({ target: refresh, duration: seconds, warmup: 2 });
  const syncAlone = await sync(server.url, token, 0);
  const [during, syncUnderLoad] = await Promise.all([measure({ target: refresh, duration: seconds, warmup: 0 }), sync(server.url, token, users)]);
  const rows = [
    ['initial sync alone', `${users} users in ${syncAlone.toFixed(1)} s (${(users / syncAlone).toFixed(0)} users/s, ${((2 * users) / syncAlone).toFixed(0)} requests/s)`],
    ['sync with refreshes running', `${users} users in ${syncUnderLoad.toFixed(1)} s`],
    ['refreshes alone', `${alone.rps.toFixed(0)}/s, p99 ${alone.p99} ms`],
    ['refreshes during the sync', `${during.rps.toFixed(0)}/s, p99 ${during.p99} ms (${(during.rps / alone.rps).toFixed(2)}x alone; the sync ran ${Math.min(1, syncUnderLoad / seconds).toFixed(2)} of the window)`],
  ];
  console.log(`scim-sync: ${values.db}, ${workers} workers, ${os.cpus().length} cores; ${throttled} requests answered 429 and sent again after Retry-After`);
  for (const [what, figure] of rows) console.log(`  ${what.padEnd(30)} ${figure}`);
} finally {
  await stopAllChildren();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
}
