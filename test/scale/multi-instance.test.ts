import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-run.js';
import { TEST_DIALECTS, createPostgresDatabase } from '../helpers/database.js';
import { cleanupOps, startServer, type RunningServer } from '../helpers/ops-server.js';

const PASSWORD = 'correct horse battery staple';

/** Runs a `school-auth` command to completion; throws with its stderr when it fails. */
async function cli(args: string[], env: Record<string, string>, input?: string): Promise<string> {
  const result = await runCli(args, { cwd: process.cwd(), env, input });
  if (result.code !== 0) throw new Error(`school-auth ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

async function post(url: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> | undefined }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) };
}

/** Two real server processes sharing one PostgreSQL database, as behind a load balancer. */
describe.runIf(TEST_DIALECTS.includes('postgres'))('two instances on one PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let env: Record<string, string>;
  let a: RunningServer;
  let b: RunningServer;

  beforeAll(async () => {
    database = await createPostgresDatabase();
    env = {
      DATABASE_URL: database.url,
      REFRESH_TOKEN_ROTATION: 'on',
      KEY_ACTIVATION_DELAY: '1',
      KEY_CACHE_SECONDS: '1',
      LOGIN_THROTTLE: 'off',
      ISSUER: 'https://auth.test',
    };
    // Both start at once on an empty database: the migration lock lets exactly one migrate.
    const serve = () => startServer({ ...env, LOG_LEVEL: 'warn' });
    [a, b] = await Promise.all([serve(), serve()]);
    await cli(['school', 'add', 'lincoln'], env);
    await cli(['admin', 'add', '--school', 'lincoln', '--username', 'alice', '--password-stdin'], env, PASSWORD);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.server.stop(), b?.server.stop()]);
    await database?.drop();
    await cleanupOps();
  });

  async function login(server: RunningServer) {
    const answer = await post(`${server.url}/admin/auth/login`, { school_id: 'lincoln', username: 'alice', password: PASSWORD });
    expect(answer.status).toBe(200);
    return answer.body as { access_token: string; refresh_token: string };
  }

  it('migrated once although both instances started together', async () => {
    const ready = await Promise.all([fetch(`${a.url}/readyz`), fetch(`${b.url}/readyz`)]);
    expect(ready.map((r) => r.status)).toEqual([200, 200]);
    expect([a, b].map(({ server }) => server.stdout + server.stderr).join('')).not.toMatch(/error/i);
  });

  it('a session created on A refreshes on B, and B knows its access token', async () => {
    const session = await login(a);
    const refreshed = await post(`${b.url}/auth/refresh`, { refresh_token: session.refresh_token });
    expect(refreshed.status).toBe(200);
    const me = await fetch(`${b.url}/admin/auth/me`, { headers: { authorization: `Bearer ${session.access_token}` } });
    expect(me.status).toBe(200);
  });

  it('a logout on A is refused on B at once', async () => {
    const session = await login(a);
    const rotated = await post(`${b.url}/auth/refresh`, { refresh_token: session.refresh_token });
    const successor = rotated.body?.refresh_token as string;
    expect((await post(`${a.url}/auth/logout`, { refresh_token: successor })).status).toBe(204);
    expect((await post(`${b.url}/auth/refresh`, { refresh_token: successor })).status).toBe(401);
    const me = await fetch(`${b.url}/admin/auth/me`, { headers: { authorization: `Bearer ${session.access_token}` } });
    expect(me.status).toBe(401);
  });

  it('a CLI revoke is refused on both instances at once', async () => {
    const onA = await login(a);
    const onB = await login(b);
    await cli(['sessions', 'revoke', '--school', 'lincoln', '--username', 'alice'], env);
    expect((await post(`${b.url}/auth/refresh`, { refresh_token: onA.refresh_token })).status).toBe(401);
    expect((await post(`${a.url}/auth/refresh`, { refresh_token: onB.refresh_token })).status).toBe(401);
  });

  it('parallel refreshes of one token over both instances produce exactly one successor', async () => {
    const session = await login(a);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(`${(i % 2 === 0 ? a : b).url}/auth/refresh`, { refresh_token: session.refresh_token })),
    );
    expect(answers.filter((answer) => answer.status >= 500)).toEqual([]);
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((answer) => answer.body?.refresh_token)).size).toBe(1);
  });

  it('after keys rotate, both sign with the new key within a bounded time and every token verifies everywhere', async () => {
    const before = await Promise.all([login(a), login(b)]);
    const oldKid = decodeProtectedHeader(before[0].access_token).kid;
    await cli(['keys', 'rotate'], env);
    // Bound: KEY_ACTIVATION_DELAY (1 s) + KEY_CACHE_SECONDS (1 s), with slack for a busy machine.
    const deadline = Date.now() + 10_000;
    let after = await Promise.all([login(a), login(b)]);
    while (after.some((s) => decodeProtectedHeader(s.access_token).kid === oldKid) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      after = await Promise.all([login(a), login(b)]);
    }
    const newKids = after.map((s) => decodeProtectedHeader(s.access_token).kid);
    expect(newKids[0]).not.toBe(oldKid);
    expect(newKids[1]).toBe(newKids[0]);
    for (const server of [a, b]) {
      const jwks = (await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
      const keySet = createLocalJWKSet(jwks);
      for (const token of [...before, ...after].map((s) => s.access_token)) {
        const { payload } = await jwtVerify(token, keySet, { issuer: 'https://auth.test', audience: 'school-admin', typ: 'at+jwt' });
        expect(payload.username).toBe('alice');
      }
    }
  }, 30_000);
});
