import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, seedAdmin, type TestApp } from '../../helpers/app.js';

const ALLOWED = 'https://admin.example.org';
const OTHER = 'https://evil.example.com';

let t: TestApp | undefined;

afterEach(async () => {
  await t?.close();
  t = undefined;
});

function preflight(app: TestApp['app'], origin: string) {
  return app.inject({
    method: 'OPTIONS',
    url: '/admin/auth/login',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
  });
}

function listOf(header: string | string[] | number | undefined): string[] {
  return String(header ?? '')
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '');
}

describe('CORS', () => {
  it('allows no browser origin when CORS_ORIGINS is unset', async () => {
    t = await createTestApp();
    const response = await preflight(t.app, ALLOWED);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    expect(response.headers['access-control-allow-methods']).toBeUndefined();
    expect(response.statusCode).not.toBe(204);

    const post = await t.app.inject({ method: 'POST', url: '/admin/auth/login', headers: { origin: ALLOWED, 'content-type': 'application/json' }, payload: '{}' });
    expect(post.statusCode).toBe(422);
    expect(post.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers the preflight of a configured origin: 204, the origin echoed, POST and content-type allowed', async () => {
    t = await createTestApp({ CORS_ORIGINS: ALLOWED });
    const response = await preflight(t.app, ALLOWED);
    expect(response.statusCode).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(listOf(response.headers['access-control-allow-methods'])).toContain('post');
    expect(listOf(response.headers['access-control-allow-headers'])).toContain('content-type');
    expect(listOf(response.headers.vary)).toContain('origin');
    // Credentials are bearer tokens in JSON, never cookies: no reason to allow credentials.
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('does not allow an origin that is not configured', async () => {
    t = await createTestApp({ CORS_ORIGINS: ALLOWED });
    const response = await preflight(t.app, OTHER);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();

    const post = await t.app.inject({ method: 'POST', url: '/admin/auth/login', headers: { origin: OTHER, 'content-type': 'application/json' }, payload: '{}' });
    expect(post.headers['access-control-allow-origin']).toBeUndefined();
    // A prefix or suffix of the allowed origin is another origin.
    for (const lookalike of [`${ALLOWED}.evil.com`, 'https://admin.example.org:8443', 'http://admin.example.org']) {
      expect((await preflight(t.app, lookalike)).headers['access-control-allow-origin'], lookalike).toBeUndefined();
    }
  });

  it('marks an actual POST from the allowed origin with Access-Control-Allow-Origin', async () => {
    t = await createTestApp({ CORS_ORIGINS: ALLOWED });
    const admin = await seedAdmin(t.services);
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/auth/login',
      headers: { origin: ALLOWED, 'content-type': 'application/json' },
      payload: JSON.stringify({ school_id: admin.schoolId, username: admin.username, password: admin.password }),
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(listOf(response.headers['access-control-expose-headers'])).toContain('x-request-id');
  });
});

describe('CORS for every route of the API', () => {
  /** The browser's operations: SCIM (/scim/v2) is called by directories, server to server, never by a browser. */
  async function operations(app: TestApp['app']): Promise<{ method: string; url: string }[]> {
    const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json<{ paths: Record<string, Record<string, unknown>> }>();
    return Object.entries(document.paths).filter(([path]) => !path.startsWith('/scim/')).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => ({ method: method.toUpperCase(), url: path.replace(/\{[^}]+\}/g, 'x') })),
    );
  }

  it('answers the preflight of each route with its method and the headers a browser client sends', async () => {
    t = await createTestApp({ CORS_ORIGINS: ALLOWED });
    const routes = await operations(t.app);
    expect(routes).toContainEqual({ method: 'DELETE', url: '/admin/auth/sessions/x' });
    for (const { method, url } of routes) {
      const response = await t.app.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: ALLOWED, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type, x-request-id' },
      });
      expect(response.statusCode, `${method} ${url}`).toBe(204);
      expect(response.headers['access-control-allow-origin']).toBe(ALLOWED);
      expect(listOf(response.headers['access-control-allow-methods']), `${method} ${url}`).toContain(method.toLowerCase());
      expect(listOf(response.headers['access-control-allow-headers'])).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-request-id']));
    }
  });

  it('allows exactly the methods the routes use, and If-None-Match for the revocation feed', async () => {
    t = await createTestApp({ CORS_ORIGINS: ALLOWED });
    const used = [...new Set((await operations(t.app)).map((route) => route.method.toLowerCase()))].sort();
    const response = await preflight(t.app, ALLOWED);
    expect(listOf(response.headers['access-control-allow-methods']).sort()).toEqual(used);
    expect(listOf(response.headers['access-control-allow-headers']).sort()).toEqual(['authorization', 'content-type', 'if-none-match', 'x-request-id']);
    expect(listOf(response.headers['access-control-expose-headers']).sort()).toEqual(['etag', 'retry-after', 'www-authenticate', 'x-request-id']);
  });

  it('a browser on the allowed origin signs out a lost device: the DELETE answer carries the origin', async () => {
    t = await createTestApp({ CORS_ORIGINS: ALLOWED });
    const admin = await seedAdmin(t.services);
    const login = await t.app.inject({
      method: 'POST',
      url: '/admin/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ school_id: admin.schoolId, username: admin.username, password: admin.password }),
    });
    const token = login.json<{ access_token: string }>().access_token;
    const sessions = await t.app.inject({ method: 'GET', url: '/admin/auth/sessions', headers: { authorization: `Bearer ${token}` } });
    const [session] = sessions.json<{ sessions: { session_id: string }[] }>().sessions;
    const response = await t.app.inject({ method: 'DELETE', url: `/admin/auth/sessions/${session!.session_id}`, headers: { origin: ALLOWED, authorization: `Bearer ${token}` } });
    expect(response.statusCode).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe(ALLOWED);
  });
});
