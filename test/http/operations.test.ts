import type { FastifyInstance } from 'fastify';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWK } from 'jose';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { connectPostgres } from '../../src/db/connect.js';
import type { Database } from '../../src/db/database.js';
import { createTestApp, seedAdmin, signIn, type TestApp } from '../helpers/app.js';
import { BODIES, ENDPOINTS } from '../helpers/contract.js';
import { TEST_DIALECTS, createTestDatabase } from '../helpers/database.js';

const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

async function jwks(app: FastifyInstance): Promise<{ keys: JWK[] }> {
  const response = await app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  return response.json();
}

function expectPublicOnly(keys: JWK[]) {
  for (const key of keys) {
    for (const member of PRIVATE_JWK_MEMBERS) expect(key, `${key.kid} has ${member}`).not.toHaveProperty(member);
  }
}

describe.each(TEST_DIALECTS)('operations endpoints on %s', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({}, dialect);
  });
  afterEach(() => t.close());

  /** The same application, on another database handle (for readiness failures). */
  async function appOn(database: Database): Promise<FastifyInstance> {
    return buildApp({ ...t.services, database, db: database.db, logger: pino({ level: 'silent' }) });
  }

  it('answers /healthz and /readyz with 200 when the database is migrated', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
  });

  it('answers /readyz 503 with Retry-After when the database is not migrated or unreachable', async () => {
    const unmigrated = await createTestDatabase(dialect);
    const unreachable = dialect === 'postgres' ? connectPostgres('postgres://postgres@127.0.0.1:1/none') : await createTestDatabase('sqlite');
    if (dialect === 'sqlite') await unreachable.close();
    for (const database of [unmigrated, unreachable]) {
      const app = await appOn(database);
      try {
        const response = await app.inject({ method: 'GET', url: '/readyz' });
        expect(response.statusCode).toBe(503);
        expect(response.body).toBe(BODIES.unavailable);
        expect(response.headers['retry-after']).toMatch(/^\d+$/);
        expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      } finally {
        await app.close();
      }
    }
    await unmigrated.close();
    if (dialect === 'postgres') await unreachable.close();
  });

  // Regression: Kysely used to find another schema's kysely_migration tables on the same
  // PostgreSQL server, skip creating its own and fail ('relation "kysely_migration_lock" does not
  // exist'); fixed in src/db/migrate.ts (migrationTableSchema = current_schema()).
  it('starts and is ready beside another database on the same server', async () => {
    const second = await createTestApp({}, dialect);
    try {
      expect((await second.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    } finally {
      await second.close();
    }
  });

  it('answers 404 {"detail":"Not Found"} for unknown paths', async () => {
    for (const [method, url] of [
      ['GET', '/nope'],
      ['POST', '/admin/auth/logon'],
      ['GET', '/admin/auth'],
      ['POST', '/auth/refresh/extra'],
    ] as const) {
      const response = await t.app.inject({ method, url });
      expect(response.statusCode, url).toBe(404);
      expect(response.body).toBe(BODIES.notFound);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
    }
  });

  it('answers 405 with Allow for a known path and another method', async () => {
    const allowOf = (header: unknown) => String(header).split(',').map((method) => method.trim());
    for (const url of [ENDPOINTS.login, `${ENDPOINTS.login}?next=1`, ENDPOINTS.refresh, ENDPOINTS.logout]) {
      for (const method of ['GET', 'PUT', 'DELETE'] as const) {
        const response = await t.app.inject({ method, url });
        expect(response.statusCode, `${method} ${url}`).toBe(405);
        expect(response.body).toBe(BODIES.methodNotAllowed);
        expect(allowOf(response.headers.allow)).toEqual(['POST']);
      }
    }
    for (const url of [ENDPOINTS.me, '/healthz', '/readyz', '/.well-known/jwks.json']) {
      const response = await t.app.inject({ method: 'POST', url, payload: '{}', headers: { 'content-type': 'application/json' } });
      expect(response.statusCode, url).toBe(405);
      expect(response.body).toBe(BODIES.methodNotAllowed);
      expect(allowOf(response.headers.allow)).toContain('GET');
      expect(allowOf(response.headers.allow)).not.toContain('POST');
    }
  });

  it('publishes the signing key in the JWKS, public members only', async () => {
    const admin = await seedAdmin(t.services);
    const { access_token: token } = await signIn(t.app, admin);
    const { keys } = await jwks(t.app);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kid: decodeProtectedHeader(token).kid, alg: 'ES256', use: 'sig', kty: 'EC', crv: 'P-256' });
    expectPublicOnly(keys);
    await jwtVerify(token, createLocalJWKSet({ keys }), { issuer: t.config.issuer, audience: t.config.audience, currentDate: new Date(t.clock.now()) });
  });
});

describe.each(TEST_DIALECTS)('JWT_ALG=EdDSA on %s', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ JWT_ALG: 'EdDSA' }, dialect);
  });
  afterEach(() => t.close());

  it('signs with EdDSA and publishes an OKP key', async () => {
    const { access_token: token } = await signIn(t.app, await seedAdmin(t.services));
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'EdDSA', typ: 'at+jwt' });
    const { keys } = await jwks(t.app);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid: decodeProtectedHeader(token).kid });
    expectPublicOnly(keys);
    await jwtVerify(token, createLocalJWKSet({ keys }), { algorithms: ['EdDSA'], currentDate: new Date(t.clock.now()) });
    expect((await t.app.inject({ method: 'GET', url: ENDPOINTS.me, headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(200);
  });
});

describe.each(TEST_DIALECTS)('JWT_ALG=RS256 on %s', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ JWT_ALG: 'RS256' }, dialect);
  });
  afterEach(() => t.close());

  it('signs with RS256 and publishes an RSA key without private members', async () => {
    const { access_token: token } = await signIn(t.app, await seedAdmin(t.services));
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'RS256', typ: 'at+jwt' });
    const { keys } = await jwks(t.app);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', e: 'AQAB', kid: decodeProtectedHeader(token).kid });
    expect(typeof keys[0]!.n).toBe('string');
    expectPublicOnly(keys);
    await jwtVerify(token, createLocalJWKSet({ keys }), { algorithms: ['RS256'], currentDate: new Date(t.clock.now()) });
    expect((await t.app.inject({ method: 'GET', url: ENDPOINTS.me, headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(200);
  });
});
