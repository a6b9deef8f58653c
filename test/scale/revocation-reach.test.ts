/**
 * Revocation reach across instances: a session ended on instance A is refused, within 15 s, by a
 * verifier that follows instance B's feed, both instances sharing one PostgreSQL.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAccessTokenVerifier } from '../../src/verifier/index.js';
import { ok, Workspace } from '../helpers/cli-workspace.js';
import { TEST_DIALECTS, createPostgresDatabase } from '../helpers/database.js';
import { startServer } from '../helpers/ops-server.js';
import type { ServerProcess } from '../helpers/server-process.js';

const PASSWORD = 'correct horse battery staple';
const ISSUER = 'https://auth.school.test';

let ws: Workspace | undefined;
const servers: ServerProcess[] = [];
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  for (const server of servers) server.kill();
  await Promise.all(servers.splice(0).map((server) => server.exited));
  await ws?.cleanup();
  ws = undefined;
});

async function instance(env: Record<string, string>): Promise<string> {
  ws ??= new Workspace();
  const { server, url } = await startServer(env, { cwd: ws.root });
  servers.push(server);
  return url;
}

async function signIn(base: string): Promise<{ access_token: string; refresh_token: string }> {
  const response = await fetch(`${base}/admin/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ school_id: 'lincoln', username: 'alice', password: PASSWORD }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { access_token: string; refresh_token: string };
}

describe.runIf(TEST_DIALECTS.includes('postgres'))('revocation reach on two real instances sharing PostgreSQL', { timeout: 120_000 }, () => {
  it('a logout on instance A is refused by a verifier following instance B within 15 s (default 10 s polling)', async () => {
    const database = await createPostgresDatabase();
    cleanups.push(() => database.drop());
    const env = { DATABASE_URL: database.url, ISSUER, KEY_ACTIVATION_DELAY: '0' };
    const a = await instance(env);
    const b = await instance(env);
    ok(await ws!.run(['school', 'add', 'lincoln'], { env }));
    ok(await ws!.run(['admin', 'add', '--school', 'lincoln', '--username', 'alice', '--password-stdin'], { env, input: `${PASSWORD}\n` }));
    const [ended, live] = [await signIn(a), await signIn(a)];
    const verify = createAccessTokenVerifier({ issuer: ISSUER, audience: 'school-admin', jwksUrl: `${b}/.well-known/jwks.json` });
    cleanups.push(() => verify.close());
    await expect(verify(ended.access_token)).resolves.toMatchObject({ iss: ISSUER });

    const logout = await fetch(`${a}/auth/logout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: ended.refresh_token }),
    });
    expect(logout.status).toBe(204);
    const endedAt = Date.now();
    await vi.waitFor(() => expect(verify(ended.access_token)).rejects.toMatchObject({ code: 'ERR_SESSION_REVOKED' }), { timeout: 15_000, interval: 250 });
    expect(Date.now() - endedAt).toBeLessThan(15_000);
    await expect(verify(live.access_token)).resolves.toMatchObject({ iss: ISSUER });
    // Both instances publish the same feed: it lives in the shared database, not in a process.
    const [feedA, feedB] = await Promise.all([fetch(`${a}/auth/revocations`), fetch(`${b}/auth/revocations`)]);
    expect(await feedA.text()).toBe(await feedB.text());
  });
});
