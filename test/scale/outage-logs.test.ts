import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { AppContext } from '../../src/auth/context.js';
import { connectPostgres } from '../../src/db/connect.js';
import { buildManagementApp } from '../../src/http/management-app.js';
import { createLogger } from '../../src/runtime/logger.js';
import { closeServices, openServices } from '../../src/services.js';
import { postJson, seedAdmin, signIn, testConfig } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { BODIES } from '../helpers/contract.js';
import { TEST_DIALECTS, createPostgresDatabase } from '../helpers/database.js';
import { parseLogLines, type LogLine } from '../helpers/log-lines.js';
import { parseExposition, valueOf } from '../helpers/ops-prometheus.js';
import { TcpProxy } from './tcp-proxy.js';

const UNAVAILABLE = /^database unavailable since /;
const BACK = /^database back after /;

/** What an operator reads in the log while PostgreSQL goes away and comes back. */
describe.runIf(TEST_DIALECTS.includes('postgres'))('the log during a database outage on PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let proxy: TcpProxy;
  let services: AppContext;
  let app: FastifyInstance;
  let management: FastifyInstance;
  let clock: TestClock;
  let output: string[];

  beforeEach(async () => {
    database = await createPostgresDatabase();
    const target = new URL(database.url);
    proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.open();
    const viaProxy = new URL(database.url);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    const config = testConfig({ DATABASE_URL: viaProxy.toString(), ISSUER: 'https://auth.test', DATABASE_CONNECT_TIMEOUT_MS: '1000' });
    output = [];
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (output.push(chunk.toString('utf8')), done()) });
    clock = new TestClock();
    const logger = createLogger('info', sink);
    services = await openServices(config, { clock, logger, database: connectPostgres(viaProxy.toString(), config.database) });
    app = await buildApp(services);
    management = await buildManagementApp(services, app);
  });

  afterEach(async () => {
    await Promise.all([app.close(), management.close()]);
    await closeServices(services);
    await proxy.cut();
    await database.drop();
  });

  const lines = (): LogLine[] => parseLogLines(output.join(''));
  const matching = (pattern: RegExp) => lines().filter((line) => pattern.test(line.msg));

  async function databaseUp(): Promise<number | undefined> {
    const response = await management.inject({ url: '/metrics' });
    return valueOf(parseExposition(response.body), 'school_auth_database_up');
  }

  /** The probe reconnects in real time: polls the log, for at most ten seconds. */
  async function waitForLine(pattern: RegExp): Promise<LogLine> {
    for (let waited = 0; waited < 10_000; waited += 50) {
      const found = matching(pattern)[0];
      if (found !== undefined) return found;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no log line matching ${pattern} within 10 s:\n${output.join('')}`);
  }

  it('logs one line when the database goes away and one when it is back, with the refused count, and no stack', async () => {
    const admin = await seedAdmin(services);
    const session = await signIn(app, admin);
    expect(await databaseUp()).toBe(1);

    await proxy.cut();
    const refused = [
      await postJson(app, '/auth/refresh', { refresh_token: session.refresh_token }),
      await postJson(app, '/admin/auth/login', { school_id: admin.schoolId, username: admin.username, password: admin.password }),
      await app.inject({ url: '/admin/auth/me', headers: { authorization: `Bearer ${session.access_token}` } }),
      await postJson(app, '/auth/refresh', { refresh_token: session.refresh_token }),
      await management.inject({ url: '/readyz' }),
    ];
    for (const response of refused) expect(response.body).toBe(BODIES.unavailable);
    clock.advance(42);

    const down = matching(UNAVAILABLE);
    expect(down).toHaveLength(1);
    expect(down[0]!.level).toBeGreaterThanOrEqual(40);
    expect(down[0]!.msg).toMatch(/^database unavailable since 2026-01-05T08:00:00\.000Z: \S/);
    // The management listener writes no request lines.
    expect(lines().filter((line) => line.msg === 'request' && line.status === 503)).toHaveLength(refused.length - 1);
    expect(output.join('')).not.toContain('"stack"');
    expect(await databaseUp()).toBe(0);

    await proxy.open();
    const back = await waitForLine(BACK);
    expect(back.msg).toBe(`database back after 42 s; ${refused.length} requests refused meanwhile`);
    expect(await databaseUp()).toBe(1);
    expect((await postJson(app, '/auth/refresh', { refresh_token: session.refresh_token })).statusCode).toBe(200);
    expect(matching(UNAVAILABLE)).toHaveLength(1);
    expect(matching(BACK)).toHaveLength(1);
  });

  it('counts a second outage afresh', async () => {
    const admin = await seedAdmin(services);
    const login = { school_id: admin.schoolId, username: admin.username, password: admin.password };
    await proxy.cut();
    expect((await postJson(app, '/admin/auth/login', login)).statusCode).toBe(503);
    await proxy.open();
    await waitForLine(BACK);

    await proxy.cut();
    clock.advance(7);
    expect((await postJson(app, '/admin/auth/login', login)).statusCode).toBe(503);
    expect((await postJson(app, '/admin/auth/login', login)).statusCode).toBe(503);
    expect(matching(UNAVAILABLE).map((line) => /^database unavailable since (\S+): /.exec(line.msg)?.[1])).toEqual([
      '2026-01-05T08:00:00.000Z',
      '2026-01-05T08:00:07.000Z',
    ]);
    clock.advance(3);
    await proxy.open();
    for (let waited = 0; matching(BACK).length < 2 && waited < 10_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(matching(BACK).map((line) => line.msg)).toEqual([
      'database back after 0 s; 1 request refused meanwhile',
      'database back after 3 s; 2 requests refused meanwhile',
    ]);
  });

  it('still logs a genuine bug with its stack, and does not call it an outage', async () => {
    const admin = await seedAdmin(services);
    const session = await signIn(app, admin);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await client.query('drop table refresh_tokens cascade').finally(() => client.end());

    const response = await postJson(app, '/auth/refresh', { refresh_token: session.refresh_token });
    expect(response.statusCode).toBe(500);
    const bug = lines().find((line) => line.msg === 'unhandled error');
    expect((bug?.err as { stack?: string } | undefined)?.stack).toMatch(/refresh_tokens/);
    expect(matching(UNAVAILABLE)).toHaveLength(0);
    expect(await databaseUp()).toBe(1);
  });
});
