import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterEach } from 'vitest';
import { buildApp } from '../../src/app.js';
import { addAdmin } from '../../src/auth/accounts/admins.js';
import { addSchool } from '../../src/auth/accounts/schools.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { connect } from '../../src/db/connect.js';
import type { Dialect } from '../../src/db/database.js';
import type { AppContext } from '../../src/auth/context.js';
import { systemClock, type Clock } from '../../src/runtime/clock.js';
import { closeServices, openServices } from '../../src/services.js';
import { TestClock } from './clock.js';
import { createTestDatabase } from './database.js';

/**
 * The one way tests build the application in this process, answering through `app.inject()`; a
 * test that needs a served process calls `startServer()` (ops-server.ts) instead.
 */
export interface TestApp<C extends Clock = TestClock> {
  readonly app: FastifyInstance;
  readonly services: AppContext;
  readonly clock: C;
  readonly config: Config;
  close(): Promise<void>;
}

/** Configuration for tests: the defaults, overridden by the given environment variables. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ KEY_ACTIVATION_DELAY: '0', ...env });
}

/** The SQLite file of a DATA_DIR that the command line under test opens too. */
export interface DataDirStorage {
  readonly dataDir: string;
}

/** The real application on a fresh migrated database of `dialect`, with a clock the test controls. */
export async function createTestApp(env?: Record<string, string>, dialect?: Dialect, clock?: TestClock): Promise<TestApp>;
/** The real application on a DATA_DIR's database, opened as `serve` opens it, on the system clock. */
export async function createTestApp(env: Record<string, string>, storage: DataDirStorage): Promise<TestApp<Clock>>;
export async function createTestApp(env: Record<string, string> = {}, storage: Dialect | DataDirStorage = 'sqlite', clock?: Clock): Promise<TestApp<Clock>> {
  const onDataDir = typeof storage !== 'string';
  const config = testConfig(onDataDir ? { DATA_DIR: storage.dataDir, ...env } : env);
  const database = onDataDir ? connect(config) : await createTestDatabase(storage);
  const appClock = clock ?? (onDataDir ? systemClock : new TestClock());
  const services = await openServices(config, { clock: appClock, database });
  const app = await buildApp(services);
  return {
    app,
    services,
    clock: appClock,
    config,
    close: async () => {
      await app.close();
      await closeServices(services);
    },
  };
}

export const PASSWORD = 'correct horse battery staple';

/** Creates a school (if needed) and an admin in it, through the same code as the CLI. */
export async function seedAdmin(
  services: AppContext,
  admin: { schoolId?: string; username?: string; password?: string } = {},
): Promise<{ schoolId: string; username: string; password: string }> {
  const seeded = { schoolId: 'lincoln-high', username: 'alice', password: PASSWORD, ...admin };
  await addSchool(services, seeded.schoolId, undefined).catch(() => undefined);
  await addAdmin(services, { schoolId: seeded.schoolId, username: seeded.username }, seeded.password);
  return seeded;
}

export function postJson(app: FastifyInstance, url: string, body: unknown, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) });
}

/** Signs in and returns the 200 body; fails the test on any other answer. */
export async function signIn(app: FastifyInstance, credentials: { schoolId: string; username: string; password: string }) {
  const response = await postJson(app, '/admin/auth/login', {
    school_id: credentials.schoolId,
    username: credentials.username,
    password: credentials.password,
  });
  if (response.statusCode !== 200) throw new Error(`login answered ${response.statusCode}: ${response.body}`);
  return response.json<{ access_token: string; refresh_token: string; expires_in: number; refresh_expires_in: number }>();
}

/** Opens test apps on one dialect, each closed after the test that opened it. */
export function useTestApps(dialect: Dialect): (env?: Record<string, string>) => Promise<TestApp> {
  const opened: TestApp[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((t) => t.close()));
  });
  return async (env = {}) => {
    const t = await createTestApp(env, dialect);
    opened.push(t);
    return t;
  };
}
