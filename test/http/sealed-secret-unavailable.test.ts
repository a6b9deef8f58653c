import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { encryptStoredSecrets } from '../../src/auth/key-encryption-upgrade.js';
import type { AppContext } from '../../src/auth/context.js';
import type { Database } from '../../src/db/database.js';
import { createLogger } from '../../src/runtime/logger.js';
import { closeServices, openServices } from '../../src/services.js';
import { PASSWORD, postJson, seedAdmin, signIn, testConfig, type TestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { BODIES } from '../helpers/contract.js';
import { createTestDatabase, TEST_DIALECTS } from '../helpers/database.js';
import { useKeyFiles } from '../helpers/key-files.js';
import { parseLogLines } from '../helpers/log-lines.js';
import { enrollTotp, loginRequest, totpCode, verify } from '../helpers/mfa.js';

// `keys encrypt` seals the stored secrets at once; an instance still running without the key file
// meets them at its next key reload or second factor. It must say so: 503 with Retry-After (a
// load balancer retries elsewhere), /readyz 503, and one log line that names the fix.

const newKeyFile = useKeyFiles();
const ADMIN = { schoolId: 'lincoln-high', username: 'alice', password: PASSWORD };

interface Instance extends TestApp {
  logs: string[];
}

const opened: Instance[] = [];
const databases: Database[] = [];
afterEach(async () => {
  for (const { app, services } of opened.splice(0) as { app: FastifyInstance; services: AppContext }[]) {
    await app.close();
    await closeServices(services);
  }
  await Promise.all(databases.splice(0).map((database) => database.close()));
});

/** One instance on the shared database (which the test closes), logging JSON lines into `logs`. */
async function openInstance(database: Database, clock: TestClock, env: Record<string, string>): Promise<Instance> {
  const logs: string[] = [];
  const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (logs.push(chunk.toString('utf8')), done()) });
  const shared = { ...database, close: () => Promise.resolve() };
  const services = await openServices(testConfig(env), { clock, database: shared, logger: createLogger('info', sink) });
  const instance = { app: await buildApp(services), services, clock, config: services.config, logs, close: () => Promise.resolve() };
  opened.push(instance);
  return instance;
}

function sealedSecretLines(instance: Instance) {
  return parseLogLines(instance.logs.join('')).filter((line) => line.msg.includes('KEY_ENCRYPTION_KEY_FILE'));
}

function expectUnavailable(response: { statusCode: number; body: string; headers: Record<string, unknown> }) {
  expect(response.statusCode, response.body).toBe(503);
  expect(response.body).toBe(BODIES.unavailable);
  expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
}

describe.each(TEST_DIALECTS)('an instance that meets a sealed secret it cannot open, on %s', (dialect) => {
  it('a signing key sealed by `keys encrypt`: 503 with Retry-After, /readyz 503, one log line with the fix', async () => {
    const database = await createTestDatabase(dialect);
    databases.push(database);
    const clock = new TestClock();
    const withoutFile = await openInstance(database, clock, {});
    await seedAdmin(withoutFile.services);
    expect((await withoutFile.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    await signIn(withoutFile.app, ADMIN);

    const env = { KEY_ENCRYPTION_KEY_FILE: newKeyFile() };
    await encryptStoredSecrets({ db: database.db, clock, config: testConfig(env) });
    const withFile = await openInstance(database, clock, env);
    clock.advance(withoutFile.services.config.keyCacheSeconds + 1);

    expectUnavailable(await loginRequest(withoutFile.app, ADMIN));
    expectUnavailable(await loginRequest(withoutFile.app, ADMIN));
    expectUnavailable(await withoutFile.app.inject({ method: 'GET', url: '/readyz' }));
    const lines = sealedSecretLines(withoutFile);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.msg).toMatch(/set KEY_ENCRYPTION_KEY_FILE to the key file .*and restart/);
    expect(JSON.stringify(lines[0])).not.toContain('"d"');

    expect((await loginRequest(withFile.app, ADMIN)).statusCode).toBe(200);
    expect((await withFile.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });

  it('/readyz answers 503 before any request signs: readiness opens the signing key', async () => {
    const database = await createTestDatabase(dialect);
    databases.push(database);
    const clock = new TestClock();
    const withoutFile = await openInstance(database, clock, {});
    await encryptStoredSecrets({ db: database.db, clock, config: testConfig({ KEY_ENCRYPTION_KEY_FILE: newKeyFile() }) });
    clock.advance(withoutFile.services.config.keyCacheSeconds + 1);
    expectUnavailable(await withoutFile.app.inject({ method: 'GET', url: '/readyz' }));
    expect(sealedSecretLines(withoutFile)).toHaveLength(1);
  });

  it('a TOTP secret sealed under a key file this instance lacks: the second factor answers 503', async () => {
    const database = await createTestDatabase(dialect);
    databases.push(database);
    const clock = new TestClock();
    // A long key cache: this instance keeps signing with the key it loaded before `keys encrypt`.
    const withoutFile = await openInstance(database, clock, { KEY_CACHE_SECONDS: '3600' });
    await seedAdmin(withoutFile.services);
    await signIn(withoutFile.app, ADMIN);

    const env = { KEY_ENCRYPTION_KEY_FILE: newKeyFile() };
    await encryptStoredSecrets({ db: database.db, clock, config: testConfig(env) });
    const withFile = await openInstance(database, clock, env);
    const { secret } = await enrollTotp(withFile, (await signIn(withFile.app, ADMIN)).access_token);
    clock.advance(30);

    const challenge = await loginRequest(withoutFile.app, ADMIN);
    expect(challenge.statusCode, challenge.body).toBe(403);
    const code = totpCode(withFile, secret);
    expectUnavailable(await verify(withoutFile, challenge.json<{ mfa_token: string }>().mfa_token, code));
    expectUnavailable(await withoutFile.app.inject({ method: 'GET', url: '/readyz' }));
    expect(sealedSecretLines(withoutFile)).toHaveLength(1);

    const retried = await loginRequest(withFile.app, ADMIN);
    expect((await verify(withFile, retried.json<{ mfa_token: string }>().mfa_token, code)).statusCode).toBe(200);
    expect((await postJson(withFile.app, '/auth/refresh', { refresh_token: 'x' })).statusCode).toBe(401);
  });
});
