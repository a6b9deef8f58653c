import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { ok, Workspace } from '../helpers/cli-workspace.js';
import { TEST_DIALECTS, createPostgresDatabase } from '../helpers/database.js';
import { freePort } from '../helpers/free-port.js';
import { ServerProcess } from '../helpers/server-process.js';

// Instances that share a database must sign with one `iss`: otherwise each refuses the others'
// access tokens, and the platform's verifiers can pin only one of them.

const PASSWORD = 'correct horse battery staple';

let ws: Workspace | undefined;
const servers: ServerProcess[] = [];
const dropped: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const server of servers) server.kill();
  await Promise.all(servers.splice(0).map((server) => server.exited));
  await Promise.all(dropped.splice(0).map((drop) => drop()));
  await ws?.cleanup();
  ws = undefined;
});

async function instance(env: Record<string, string | undefined>): Promise<{ server: ServerProcess; base: string }> {
  ws ??= new Workspace();
  const port = await freePort();
  const server = ServerProcess.start({ cwd: ws.root, env: { DATA_DIR: ws.dataDir, HOST: '127.0.0.1', PORT: String(port), ISSUER: undefined, ...env } });
  servers.push(server);
  return { server, base: `http://127.0.0.1:${port}` };
}

describe.runIf(TEST_DIALECTS.includes('postgres'))('two real instances on one PostgreSQL', { timeout: 120_000 }, () => {
  it('without ISSUER both refuse to start, naming ISSUER', async () => {
    const database = await createPostgresDatabase();
    dropped.push(() => database.drop());
    const [a, b] = await Promise.all([instance({ DATABASE_URL: database.url }), instance({ DATABASE_URL: database.url })]);
    for (const { server } of [a, b]) {
      expect(await server.waitExit(30_000)).toEqual({ code: 1, signal: null });
      expect(server.stderr).toMatch(/ISSUER/);
      expect(server.stderr).not.toMatch(/unexpected error/);
    }
  });

  it('with one ISSUER, an access token from one instance is accepted by the other', async () => {
    const database = await createPostgresDatabase();
    dropped.push(() => database.drop());
    const env = { DATABASE_URL: database.url, ISSUER: 'https://auth.school.test', KEY_ACTIVATION_DELAY: '0' };
    const [a, b] = await Promise.all([instance(env), instance(env)]);
    await Promise.all([a.server.waitHealthy(a.base), b.server.waitHealthy(b.base)]);
    ok(await ws!.run(['school', 'add', 'lincoln'], { env }));
    ok(await ws!.run(['admin', 'add', '--school', 'lincoln', '--username', 'alice', '--password-stdin'], { env, input: `${PASSWORD}\n` }));
    const login = await fetch(`${a.base}/admin/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ school_id: 'lincoln', username: 'alice', password: PASSWORD }),
    });
    expect(login.status).toBe(200);
    const { access_token: token } = (await login.json()) as { access_token: string };
    const me = await fetch(`${b.base}/admin/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
  });
});

describe('a server reachable from other machines', { timeout: 60_000 }, () => {
  it('refuses to start on a non-loopback HOST without ISSUER, naming ISSUER', async () => {
    const { server } = await instance({ HOST: '0.0.0.0' });
    expect(await server.waitExit(30_000)).toEqual({ code: 1, signal: null });
    expect(server.stderr).toMatch(/ISSUER/);
  });

  it('keeps the http://HOST:PORT default for one instance on loopback and SQLite', async () => {
    const { server, base } = await instance({});
    await server.waitHealthy(base);
    expect(server.running).toBe(true);
  });
});

describe('the ISSUER rule in the configuration', () => {
  it.each([
    [{ DATABASE_URL: 'postgres://db/school_auth' }],
    [{ HOST: '0.0.0.0' }],
    [{ HOST: '::' }],
    [{ HOST: '10.1.2.3' }],
    [{ HOST: 'auth.school.internal' }],
  ])('%o without ISSUER is a problem naming ISSUER', (env) => {
    expect(() => loadConfig(env)).toThrow(/ISSUER/);
  });

  it.each([[{}], [{ HOST: 'localhost' }], [{ HOST: '127.0.0.2' }], [{ HOST: '::1' }]])('%o keeps the default issuer', (env) => {
    expect(loadConfig(env).issuer).toMatch(/^http:\/\//);
  });

  it('an explicit ISSUER satisfies it', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://db/x', HOST: '0.0.0.0', ISSUER: 'https://auth.example' }).issuer).toBe('https://auth.example');
  });
});
