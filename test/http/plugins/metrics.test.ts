import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildManagementApp } from '../../../src/http/management-app.js';
import { createTestApp, postJson, seedAdmin, signIn, type TestApp } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { find, parseExposition, valueOf, type Exposition } from '../../helpers/ops-prometheus.js';

let t: TestApp | undefined;
let management: FastifyInstance | undefined;

afterEach(async () => {
  await management?.close();
  await t?.close();
  management = undefined;
  t = undefined;
});

/** GET /metrics on the management listener's app of the test app `t`. */
async function managementInject(): Promise<Awaited<ReturnType<FastifyInstance['inject']>>> {
  management ??= await buildManagementApp(t!.services, t!.app);
  return management.inject({ method: 'GET', url: '/metrics' });
}

async function scrape(): Promise<{ exposition: Exposition; contentType: string }> {
  const response = await managementInject();
  expect(response.statusCode).toBe(200);
  return { exposition: parseExposition(response.body), contentType: String(response.headers['content-type']) };
}

describe.each(TEST_DIALECTS)('GET /metrics (%s)', (dialect) => {
  it('is Prometheus text that counts logins and refreshes by outcome', async () => {
    t = await createTestApp({}, dialect);
    const admin = await seedAdmin(t.services);

    const before = await scrape();
    expect(before.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(valueOf(before.exposition, 'school_auth_logins_total', { outcome: 'success' }) ?? 0).toBe(0);

    const tokens = await signIn(t.app, admin);
    const refused = await postJson(t.app, '/admin/auth/login', { school_id: admin.schoolId, username: admin.username, password: 'not the password at all' });
    expect(refused.statusCode).toBe(401);
    const invalid = await postJson(t.app, '/admin/auth/login', { school_id: admin.schoolId, username: admin.username });
    expect(invalid.statusCode).toBe(422);
    const refreshed = await postJson(t.app, '/auth/refresh', { refresh_token: tokens.refresh_token });
    expect(refreshed.statusCode).toBe(200);

    const { exposition } = await scrape();
    expect(exposition.types.get('school_auth_logins_total')).toBe('counter');
    expect(valueOf(exposition, 'school_auth_logins_total', { outcome: 'success' })).toBe(1);
    expect(valueOf(exposition, 'school_auth_logins_total', { outcome: 'refused' })).toBe(1);
    expect(valueOf(exposition, 'school_auth_logins_total', { outcome: 'invalid_body' })).toBe(1);
    expect(valueOf(exposition, 'school_auth_logins_total', { outcome: 'throttled' }) ?? 0).toBe(0);
    expect(valueOf(exposition, 'school_auth_logins_total', { outcome: 'error' }) ?? 0).toBe(0);
    expect(valueOf(exposition, 'school_auth_refreshes_total', { outcome: 'success' })).toBe(1);
    expect(valueOf(exposition, 'school_auth_refreshes_total', { outcome: 'refused' }) ?? 0).toBe(0);
  });

  it('has a request duration histogram with series for the login route', async () => {
    t = await createTestApp({}, dialect);
    const admin = await seedAdmin(t.services);
    await signIn(t.app, admin);
    await signIn(t.app, admin);
    expect((await postJson(t.app, '/admin/auth/login', { school_id: admin.schoolId, username: admin.username, password: 'wrong password!!' })).statusCode).toBe(401);

    const { exposition } = await scrape();
    const family = 'school_auth_http_request_duration_seconds';
    expect(exposition.types.get(family)).toBe('histogram');
    const login = { route: '/admin/auth/login', method: 'POST' };
    expect(valueOf(exposition, `${family}_count`, { ...login, status: '200' })).toBe(2);
    expect(valueOf(exposition, `${family}_count`, { ...login, status: '401' })).toBe(1);
    expect(valueOf(exposition, `${family}_bucket`, { ...login, status: '200', le: '+Inf' })).toBe(2);
    const sum = valueOf(exposition, `${family}_sum`, { ...login, status: '200' });
    expect(sum).toBeGreaterThan(0);
    // Buckets are cumulative.
    const buckets = find(exposition, `${family}_bucket`, { ...login, status: '200' }).map((sample) => sample.value);
    expect(buckets.length).toBeGreaterThan(3);
    expect([...buckets].sort((a, b) => a - b)).toEqual(buckets);
  });

  it('labels answers by route, and answers that matched no route as unmatched', async () => {
    t = await createTestApp({}, dialect);
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/no/such/path' })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/no/such/path?x=1' })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/openapi.json' })).statusCode).toBe(200);

    const { exposition } = await scrape();
    const count = 'school_auth_http_request_duration_seconds_count';
    expect(valueOf(exposition, count, { route: '/healthz', method: 'GET', status: '200' })).toBe(1);
    expect(valueOf(exposition, count, { route: 'unmatched', method: 'GET', status: '404' })).toBe(2);
    expect(valueOf(exposition, count, { route: '/openapi.json', method: 'GET', status: '200' })).toBe(1);
    // A 404 is counted once, and never under the path it asked for.
    expect(find(exposition, count, {}).map((sample) => sample.labels.route)).not.toContain('/no/such/path');
    expect(find(exposition, count, { status: '404' })).toHaveLength(1);
    expect(find(exposition, count, { route: 'unmatched' })).toHaveLength(1);
  });

  it('exposes the password-hash queue, the database pool and the process metrics', async () => {
    t = await createTestApp({}, dialect);
    const { exposition } = await scrape();
    expect(exposition.types.get('school_auth_password_hash_queue_depth')).toBe('gauge');
    expect(valueOf(exposition, 'school_auth_password_hash_queue_depth')).toBe(0);
    expect(valueOf(exposition, 'school_auth_password_hash_active')).toBe(0);
    expect(exposition.types.get('school_auth_db_pool_connections')).toBe('gauge');
    for (const state of ['total', 'idle', 'waiting']) {
      expect(valueOf(exposition, 'school_auth_db_pool_connections', { state }), state).toBeGreaterThanOrEqual(0);
    }
    expect(valueOf(exposition, 'school_auth_db_pool_connections', { state: 'waiting' })).toBe(0);
    expect(valueOf(exposition, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(valueOf(exposition, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(find(exposition, 'nodejs_eventloop_lag_seconds').length).toBe(1);
    // Every family has HELP and TYPE.
    for (const sample of exposition.samples) {
      const family = sample.name.replace(/_(bucket|sum|count)$/, '');
      expect(exposition.types.has(family) || exposition.types.has(sample.name), sample.name).toBe(true);
    }
  });

  it('is 404 on the public app, always', async () => {
    t = await createTestApp({}, dialect);
    const response = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(404);
    expect(response.body).not.toContain('school_auth_');
  });

  it('is 404 on the management app with METRICS_ENABLED=off', async () => {
    t = await createTestApp({ METRICS_ENABLED: 'off' }, dialect);
    const response = await managementInject();
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ detail: 'Not Found' });
    expect(response.body).not.toContain('school_auth_');
  });
});
