import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { PASSWORD, postJson, seedAdmin, useTestApps } from '../helpers/app.js';

// Starlette's `redirect_slashes`, which the original FastAPI service had: a path without a route
// whose twin with (or without) the trailing slash has one answers 307 to that twin.

const openApp = useTestApps('sqlite');

const ROUTES = [
  '/admin/auth/login',
  '/auth/refresh',
  '/auth/logout',
  '/admin/auth/me',
  '/.well-known/jwks.json',
  '/healthz',
  '/readyz',
  '/openapi.json',
];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

describe("Starlette's trailing-slash redirect", () => {
  it('answers 307 to the path without the slash for every route and method: Location from Host, empty body', async () => {
    const { app } = await openApp();
    for (const route of ROUTES) {
      for (const method of METHODS) {
        const response = await app.inject({ method, url: `${route}/`, headers: { host: 'auth.school.test:8443' } });
        expect(response.statusCode, `${method} ${route}/`).toBe(307);
        expect(response.headers.location).toBe(`http://auth.school.test:8443${route}`);
        expect(response.body).toBe('');
        expect(response.headers['content-length']).toBe('0');
        expect(response.headers['content-type']).toBeUndefined();
      }
    }
  });

  it('keeps the query string and removes every trailing slash', async () => {
    const { app } = await openApp();
    const response = await app.inject({ method: 'POST', url: '/admin/auth/login//?next=%2Fhome&x=1', headers: { host: 'auth.school.test' } });
    expect(response.statusCode).toBe(307);
    expect(response.headers.location).toBe('http://auth.school.test/admin/auth/login?next=%2Fhome&x=1');
  });

  it('takes the scheme from X-Forwarded-Proto of a trusted proxy only', async () => {
    const { app } = await openApp({ TRUST_PROXY: '10.0.0.1' });
    const headers = { host: 'auth.school.test', 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.9' };
    const trusted = await app.inject({ method: 'POST', url: '/auth/refresh/', headers, remoteAddress: '10.0.0.1' });
    expect(trusted.headers.location).toBe('https://auth.school.test/auth/refresh');
    const untrusted = await app.inject({ method: 'POST', url: '/auth/refresh/', headers, remoteAddress: '203.0.113.7' });
    expect(untrusted.headers.location).toBe('http://auth.school.test/auth/refresh');
  });

  it('still answers 404 where neither path has a route, and for /', async () => {
    const { app } = await openApp();
    for (const url of ['/nowhere/', '/nowhere', '/admin/auth/', '/']) {
      const response = await app.inject({ method: 'POST', url });
      expect(response.statusCode, url).toBe(404);
      expect(response.json()).toEqual({ detail: 'Not Found' });
    }
  });

  it('keeps 405 for a route called with another method (the path itself has a route)', async () => {
    const { app } = await openApp();
    const response = await app.inject({ method: 'GET', url: '/admin/auth/login' });
    expect(response.statusCode).toBe(405);
  });

  it('a client that follows the redirect signs in (over a real socket)', async () => {
    const { app, services } = await openApp();
    const admin = await seedAdmin(services);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/admin/auth/login/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ school_id: admin.schoolId, username: admin.username, password: PASSWORD }),
    });
    expect(response.redirected).toBe(true);
    expect(response.url).toBe(`http://127.0.0.1:${port}/admin/auth/login`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ school_id: admin.schoolId, username: admin.username });
    expect((await postJson(app, '/auth/refresh/', {})).statusCode).toBe(307);
  });
});
