import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { connectPostgres } from '../../src/db/connect.js';
import type { AppContext } from '../../src/auth/context.js';
import { closeServices, openServices } from '../../src/services.js';
import type { FastifyInstance } from 'fastify';
import { postJson, seedAdmin, signIn, testConfig } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { TEST_DIALECTS, adminQuery, createPostgresDatabase } from '../helpers/database.js';
import { TcpProxy } from './tcp-proxy.js';

/** The service against a real PostgreSQL that goes away and comes back while it runs. */
describe.runIf(TEST_DIALECTS.includes('postgres'))('database outage on PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let proxy: TcpProxy;
  let services: AppContext;
  let app: FastifyInstance;

  beforeEach(async () => {
    database = await createPostgresDatabase();
    const target = new URL(database.url);
    proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.open();
    const viaProxy = new URL(database.url);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    const config = testConfig({ DATABASE_URL: viaProxy.toString(), ISSUER: 'https://auth.test', DATABASE_CONNECT_TIMEOUT_MS: '1000', REFRESH_TOKEN_ROTATION: 'on' });
    services = await openServices(config, { clock: new TestClock(), database: connectPostgres(viaProxy.toString(), config.database) });
    app = await buildApp(services);
  });

  afterEach(async () => {
    await app.close();
    await closeServices(services);
    await proxy.cut();
    await database.drop();
  });

  function expectUnavailable(response: Awaited<ReturnType<typeof postJson>>): void {
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({ detail: 'Service temporarily unavailable' });
    expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
  }

  it('answers 503 while the database is away, keeps /healthz, and recovers without a restart', async () => {
    const admin = await seedAdmin(services);
    const session = await signIn(app, admin);

    await proxy.cut();
    expectUnavailable(await postJson(app, '/auth/refresh', { refresh_token: session.refresh_token }));
    expectUnavailable(
      await postJson(app, '/admin/auth/login', { school_id: admin.schoolId, username: admin.username, password: admin.password }),
    );
    const me = await app.inject({ url: '/admin/auth/me', headers: { authorization: `Bearer ${session.access_token}` } });
    expect(me.statusCode).toBe(503);
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(503);
    expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);

    await proxy.open();
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(200);
    expect((await postJson(app, '/auth/refresh', { refresh_token: session.refresh_token })).statusCode).toBe(200);
    await signIn(app, admin);
  });

  it('survives its connections being killed by the server (pg_terminate_backend)', async () => {
    const admin = await seedAdmin(services);
    const session = await signIn(app, admin);
    const name = new URL(database.url).pathname.slice(1);
    const killed = await adminQuery('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);
    expect(killed.rowCount).toBeGreaterThan(0);

    // A request that meets a dead pooled connection may fail with 503, never a 500; the pool
    // then replaces the connection and the service carries on.
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 5; attempt += 1) {
      statuses.push((await postJson(app, '/auth/refresh', { refresh_token: session.refresh_token })).statusCode);
    }
    expect(statuses.every((status) => status === 200 || status === 503)).toBe(true);
    expect(statuses.at(-1)).toBe(200);
  });

  it('leaves nothing half-applied when a rotation is cut off: the token rotates once the database is back', async () => {
    const admin = await seedAdmin(services);
    const session = await signIn(app, admin);
    await proxy.cut();
    expectUnavailable(await postJson(app, '/auth/refresh', { refresh_token: session.refresh_token }));
    await proxy.open();
    const rotated = await postJson(app, '/auth/refresh', { refresh_token: session.refresh_token });
    expect(rotated.statusCode).toBe(200);
    const successor = rotated.json<{ refresh_token: string }>().refresh_token;
    expect(successor).not.toBe(session.refresh_token);
    expect((await postJson(app, '/auth/refresh', { refresh_token: successor })).statusCode).toBe(200);
  });
});
