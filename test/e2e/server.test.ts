import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ok, Workspace } from '../helpers/cli-workspace.js';
import { freePort } from '../helpers/free-port.js';
import { startServer } from '../helpers/ops-server.js';
import { ServerProcess } from '../helpers/server-process.js';

const PASSWORD = 'correct horse battery staple';

let ws: Workspace;
let servers: ServerProcess[];

beforeEach(() => {
  ws = new Workspace();
  servers = [];
});

afterEach(async () => {
  for (const server of servers) server.kill();
  await Promise.all(servers.map((server) => server.exited));
  await ws.cleanup();
});

/** `serve` on the workspace, not waited for: for the tests of its HOST, PORT, `.env` and start failures. */
function spawnServer(env: Record<string, string | undefined>): ServerProcess {
  const server = ServerProcess.start({ cwd: ws.root, env: { DATA_DIR: ws.dataDir, LOG_LEVEL: 'info', ...env } });
  servers.push(server);
  return server;
}

/** `serve` on the workspace with the service's own KEY_ACTIVATION_DELAY, answering on 127.0.0.1. */
async function serve(env: Record<string, string> = {}): Promise<{ server: ServerProcess; base: string }> {
  const { server, url } = await startServer({ LOG_LEVEL: 'info', KEY_ACTIVATION_DELAY: undefined, ...env }, { cwd: ws.root });
  servers.push(server);
  return { server, base: url };
}

/** The README's setup through the CLI (school lincoln-high, admin alice), then a healthy server. */
async function seedAndServe(): Promise<{ server: ServerProcess; base: string }> {
  ok(await ws.run(['school', 'add', 'lincoln-high', '--name', 'Lincoln High']));
  ok(await ws.run(['admin', 'add', '--school', 'lincoln-high', '--username', 'alice', '--password-stdin'], { input: `${PASSWORD}\n` }));
  return serve();
}

function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
}

describe('school-auth serve, over a real socket', { timeout: 120_000 }, () => {
  it('runs the README flow: CLI setup, then login, refresh, me, logout; one JSON log line per request, no secrets', async () => {
    const { server, base } = await seedAndServe();

    const requests: { id: string | null; method: string; route: string; status: number }[] = [];
    const record = (response: Response, method: string, route: string) => {
      requests.push({ id: response.headers.get('x-request-id'), method, route, status: response.status });
      return response;
    };

    const login = record(
      await postJson(`${base}/admin/auth/login`, { school_id: 'lincoln-high', username: 'alice', password: PASSWORD }, { 'user-agent': 'e2e-client/1.0', 'x-request-id': 'e2e-login-1' }),
      'POST',
      '/admin/auth/login',
    );
    expect(login.status).toBe(200);
    expect(login.headers.get('x-request-id')).toBe('e2e-login-1');
    expect(login.headers.get('cache-control')).toBe('no-store');
    const tokens = (await login.json()) as { access_token: string; refresh_token: string; expires_in: number; school_id: string; username: string; token_type: string };
    expect(tokens).toMatchObject({ expires_in: 900, school_id: 'lincoln-high', username: 'alice', token_type: 'bearer' });

    // Another service verifies the token on its own, with the published keys.
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, createRemoteJWKSet(new URL(`${base}/.well-known/jwks.json`)), {
      issuer: base,
      audience: 'school-admin',
      typ: 'at+jwt',
    });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload).toMatchObject({ school_id: 'lincoln-high', username: 'alice' });
    requests.push({ id: null, method: 'GET', route: '/.well-known/jwks.json', status: 200 });

    const refresh = record(await postJson(`${base}/auth/refresh`, { refresh_token: tokens.refresh_token }), 'POST', '/auth/refresh');
    expect(refresh.status).toBe(200);
    const refreshed = (await refresh.json()) as { access_token: string; expires_in: number };
    expect(refreshed.expires_in).toBe(900);
    expect(decodeProtectedHeader(refreshed.access_token).typ).toBe('at+jwt');

    const me = record(
      await fetch(`${base}/admin/auth/me`, { headers: { authorization: `Bearer ${refreshed.access_token}` }, signal: AbortSignal.timeout(20_000) }),
      'GET',
      '/admin/auth/me',
    );
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ school_id: 'lincoln-high', username: 'alice', sub: payload.sub, sid: payload.sid });

    const logout = record(await postJson(`${base}/auth/logout`, { refresh_token: tokens.refresh_token }), 'POST', '/auth/logout');
    expect(logout.status).toBe(204);
    const afterLogout = record(await postJson(`${base}/auth/refresh`, { refresh_token: tokens.refresh_token }), 'POST', '/auth/refresh');
    expect(afterLogout.status).toBe(401);
    expect(await afterLogout.json()).toEqual({ detail: 'Invalid refresh token' });

    const exit = await server.stop();
    expect(exit).toEqual({ code: 0, signal: null });

    // Structured logs: every line is JSON; exactly one line per request, with its id, route and status.
    const lines = server.requestLines();
    const notHealth = lines.filter((line) => line.route !== '/healthz');
    expect(notHealth.map(({ method, route, status }) => ({ method, route, status }))).toEqual(
      requests.map(({ method, route, status }) => ({ method, route, status })),
    );
    for (const [index, request] of requests.entries()) {
      const line = notHealth[index];
      expect(line?.reqId).toEqual(expect.any(String));
      if (request.id !== null) expect(line?.reqId).toBe(request.id);
    }
    expect(new Set(lines.map((line) => line.reqId)).size).toBe(lines.length);
    expect(lines.some((line) => line.route === '/healthz' && line.status === 200)).toBe(true);

    const everything = server.stdout + server.stderr;
    for (const secret of [PASSWORD, tokens.refresh_token, tokens.access_token, refreshed.access_token]) expect(everything).not.toContain(secret);
  });

  it('creates DATA_DIR and a migrated SQLite file on first start and listens on the HOST and PORT given', async () => {
    const port = await freePort();
    const dataDir = join(ws.root, 'nested', 'deeper', 'data');
    const server = spawnServer({ HOST: '127.0.0.2', PORT: String(port), DATA_DIR: dataDir });
    const base = `http://127.0.0.2:${port}`;
    await server.waitHealthy(base);

    expect(existsSync(join(dataDir, 'school-auth.sqlite'))).toBe(true);
    const ready = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(10_000) });
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
    const jwks = (await (await fetch(`${base}/.well-known/jwks.json`, { signal: AbortSignal.timeout(10_000) })).json()) as { keys: unknown[] };
    expect(jwks.keys).toHaveLength(1);

    // Bound to 127.0.0.2 only: the same port on 127.0.0.1 has nobody behind it.
    await expect(fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5000) })).rejects.toThrow();

    expect(await server.stop()).toEqual({ code: 0, signal: null });
    // Read once the process has exited: its log lines are written asynchronously.
    expect(server.logLines().some((line) => line.msg === `Server listening at ${base}`)).toBe(true);
  });

  it('reads .env from its working directory; real environment variables win over it', async () => {
    const port = await freePort();
    writeFileSync(join(ws.root, '.env'), `# settings for the e2e test\nPORT=${port}\nDATA_DIR=./dotenv-data\nHOST=127.0.0.9\n`);
    const server = spawnServer({ HOST: '127.0.0.1', PORT: undefined, DATA_DIR: undefined });
    await server.waitHealthy(`http://127.0.0.1:${port}`);
    expect(existsSync(join(ws.root, 'dotenv-data', 'school-auth.sqlite'))).toBe(true);
    expect(existsSync(ws.dataDir)).toBe(false);
    expect(await server.stop()).toEqual({ code: 0, signal: null });
  });

  it('stops at once with a non-zero exit on invalid settings, naming every invalid variable', async () => {
    const one = spawnServer({ PORT: 'abc' });
    const two = spawnServer({ PORT: 'abc', JWT_ALG: 'HS256', DATA_DIR: join(ws.root, 'two') });
    const [oneExit, twoExit] = await Promise.all([one.waitExit(), two.waitExit()]);
    expect(oneExit.code).not.toBe(0);
    expect(oneExit.code).not.toBeNull();
    expect(one.stderr).toMatch(/PORT="abc": expected a whole number from 0 to 65535/);
    expect(one.stderr).not.toMatch(/JWT_ALG/);
    expect(twoExit.code).not.toBe(0);
    expect(twoExit.code).not.toBeNull();
    expect(two.stderr).toContain('PORT="abc"');
    expect(two.stderr).toContain('JWT_ALG="HS256"');
    for (const server of [one, two]) expect(server.stderr).not.toContain('    at ');
    expect(existsSync(ws.dataDir)).toBe(false);
  });

  it('refuses to start on a port already in use with a plain message, not a stack trace', async () => {
    const port = await freePort();
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    try {
      const server = spawnServer({ HOST: '127.0.0.1', PORT: String(port) });
      const exit = await server.waitExit();
      expect(exit.code).not.toBe(0);
      expect(exit.code).not.toBeNull();
      expect(server.stderr).toContain(String(port));
      expect(server.stderr).toMatch(/in use/i);
      expect(server.stderr, 'an operator error, reported as a crash').not.toMatch(/unexpected error|\n\s+at /);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('copies committed writes into the database file itself within a second, off the event loop', async () => {
    const { server, base } = await seedAndServe();
    for (let i = 0; i < 3; i++) {
      const login = await postJson(`${base}/admin/auth/login`, { school_id: 'lincoln-high', username: 'alice', password: PASSWORD });
      expect(login.status).toBe(200);
    }
    // A few pages of writes: SQLite alone would leave them in the WAL until 1000 pages piled up.
    // The database file without its WAL shows what a checkpoint has copied (and synced).
    const sessionsInMainFile = () => {
      const copy = join(ws.root, `main-file-${Date.now()}.sqlite`);
      copyFileSync(join(ws.dataDir, 'school-auth.sqlite'), copy);
      const sqlite = new SQLite(copy, { readonly: true });
      try {
        return (sqlite.prepare('select count(*) as n from sessions').get() as { n: number }).n;
      } finally {
        sqlite.close();
      }
    };
    const deadline = Date.now() + 5000;
    let seen = sessionsInMainFile();
    while (seen < 3 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      seen = sessionsInMainFile();
    }
    expect(seen).toBe(3);
    // The checkpointer thread stops with the server: a clean exit, nothing logged as an error.
    expect((await server.stop()).code).toBe(0);
    expect(server.logLines().filter((line) => line.level >= 50)).toEqual([]);
  });

  it('drains in-flight logins on SIGTERM: every one answers 200, then the process exits 0', async () => {
    // Slow hashing (more argon2id iterations, one at a time) keeps logins in flight for a while.
    const slow = { ARGON2_ITERATIONS: '10', HASH_CONCURRENCY: '1' };
    const shutdownTimeout = 5;
    const seed = await ws.openApp(slow);
    await seed.seedSchool('lincoln-high');
    await seed.seedAdmin('lincoln-high', 'alice', PASSWORD);
    await seed.close();

    const { server, base } = await serve({ SHUTDOWN_TIMEOUT: String(shutdownTimeout), ...slow });

    const credentials = { school_id: 'lincoln-high', username: 'alice', password: PASSWORD };
    const logins = Array.from({ length: 4 }, (_, index) => postJson(`${base}/admin/auth/login`, credentials, { 'x-request-id': `drain-${index}` }));
    // Once the first answer is back, the others were sent with it and wait for the hasher.
    const first = await Promise.race(logins);
    expect(first.status).toBe(200);
    server.child.kill('SIGTERM');

    const responses = await Promise.all(logins);
    for (const response of responses) {
      expect(response.status).toBe(200);
      const body = (await response.json()) as { access_token?: unknown };
      expect(typeof body.access_token).toBe('string');
    }
    // This client, like any HTTP client or proxy, keeps its connections open (keep-alive): the
    // drain must not wait for the client to hang up, nor time out (SHUTDOWN_TIMEOUT) and exit 1.
    const exit = await server.waitExit((shutdownTimeout + 10) * 1000);
    const tail = server.stdout.trimEnd().split('\n').slice(-2).join('\n');
    expect(exit, `the server's last log lines:\n${tail}`).toEqual({ code: 0, signal: null });

    // Some logins really were in flight when the signal came: they were answered after it.
    const lines = server.logLines();
    const shutdownAt = lines.findIndex((line) => line.msg.startsWith('shutting down'));
    expect(shutdownAt).toBeGreaterThanOrEqual(0);
    const answeredAfter = lines.slice(shutdownAt).filter((line) => line.msg === 'request' && line.route === '/admin/auth/login');
    expect(answeredAfter.length).toBeGreaterThanOrEqual(1);
    expect(answeredAfter.every((line) => line.status === 200)).toBe(true);
    expect(server.stdout + server.stderr).not.toContain(PASSWORD);
  });
});

describe('school-auth serve and the command line share one database', { timeout: 120_000 }, () => {
  it('an admin disabled with the CLI while the server runs can no longer refresh', async () => {
    mkdirSync(ws.dataDir, { recursive: true });
    const seed = await ws.openApp();
    await seed.seedSchool('lincoln-high');
    await seed.seedAdmin('lincoln-high', 'alice', PASSWORD);
    await seed.close();
    const { server, base } = await serve();

    const login = await postJson(`${base}/admin/auth/login`, { school_id: 'lincoln-high', username: 'alice', password: PASSWORD });
    expect(login.status).toBe(200);
    const { refresh_token } = (await login.json()) as { refresh_token: string };
    expect((await postJson(`${base}/auth/refresh`, { refresh_token })).status).toBe(200);

    const disable = ok(await ws.run(['admin', 'disable', '--school', 'lincoln-high', '--username', 'alice']));
    expect(disable.stdout).toBe('admin "alice" disabled; 1 session ended\n');
    expect((await postJson(`${base}/auth/refresh`, { refresh_token })).status).toBe(401);
    expect(await server.stop()).toEqual({ code: 0, signal: null });
  });
});
