/**
 * Property-based abuse of every endpoint (fast-check): random bodies (JSON values, text, bytes,
 * objects with the real field names), random media types, random extra headers, random methods
 * and paths. Whatever arrives, the answer is never a 5xx and is one of the API's documented
 * answers: a 200/204 success, or an error status whose body is exactly a documented `detail`
 * string or (422) a list of FastAPI validation items.
 *
 * LOGIN_THROTTLE=off: every well-formed login goes all the way through the password check, so a
 * 429 is NOT accepted here (throttling has its own tests in throttle.test.ts).
 * Generated text includes U+0000 and lone surrogates, which PostgreSQL cannot store: the HTTP
 * boundary keeps them from every query (test/http/body/unstorable-text*.test.ts).
 */
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, PASSWORD, seedAdmin, signIn, type TestApp } from '../helpers/app.js';
import { TEST_DIALECTS } from '../helpers/database.js';

const DETAIL = {
  loginRefused: 'Incorrect username or password',
  invalidRefreshToken: 'Invalid refresh token',
  invalidAccessToken: 'Could not validate credentials',
  unparsable: 'There was an error parsing the body',
  notFound: 'Not Found',
  methodNotAllowed: 'Method Not Allowed',
  tooLarge: 'Request body too large',
} as const;

const POST_PATHS = { login: '/admin/auth/login', refresh: '/auth/refresh', logout: '/auth/logout' } as const;
type PostTarget = keyof typeof POST_PATHS;
const GET_PATHS = ['/healthz', '/readyz', '/.well-known/jwks.json', '/admin/auth/me', '/metrics', '/openapi.json', '/docs', '/docs/'] as const;
const PASSWORD_MARK = 'PWMARK';
const TOKEN_MARK = 'RTMARK';
const ITEM_KEYS = new Set(['type', 'loc', 'msg', 'input', 'ctx']);

/** What a 401 may say on each path. */
function unauthorizedDetail(path: string): string | undefined {
  if (path === POST_PATHS.login) return DETAIL.loginRefused;
  if (path === POST_PATHS.refresh) return DETAIL.invalidRefreshToken;
  if (path === '/admin/auth/me') return DETAIL.invalidAccessToken;
  return undefined;
}

/** Fails unless the answer is one the API documents for this method and path. */
function expectDocumented(method: string, path: string, response: LightMyRequestResponse): void {
  const where = `${method} ${path} -> ${response.statusCode} ${response.body.slice(0, 300)}`;
  expect(response.statusCode, where).toBeLessThan(500);
  const status = response.statusCode;
  expect([200, 204, 400, 401, 404, 405, 413, 422], where).toContain(status);
  if (status === 204) {
    expect(path, where).toBe(POST_PATHS.logout);
    expect(response.body, where).toBe('');
    return;
  }
  if (status === 200) {
    if (method === 'HEAD') return;
    if (path === POST_PATHS.login) {
      expect(Object.keys(response.json()).sort(), where).toEqual(['access_token', 'expires_in', 'refresh_expires_in', 'refresh_token', 'school_id', 'token_type', 'username']);
    } else if (path === POST_PATHS.refresh) {
      expect(response.json(), where).toMatchObject({ access_token: expect.any(String), expires_in: expect.any(Number), token_type: 'bearer' });
    } else {
      expect(method === 'GET' && (GET_PATHS as readonly string[]).includes(path.split('?')[0]!), where).toBe(true);
    }
    return;
  }
  if (method === 'HEAD') return;
  expect(response.headers['content-type'], where).toMatch(/^application\/json/);
  const body = response.json<{ detail: unknown }>();
  expect(Object.keys(body), where).toEqual(['detail']);
  const plain = path.split('?')[0]!;
  switch (status) {
    case 400:
      expect(body.detail, where).toBe(DETAIL.unparsable);
      break;
    case 401:
      expect(body.detail, where).toBe(unauthorizedDetail(plain));
      expect(response.headers['www-authenticate'], where).toMatch(/^Bearer/);
      break;
    case 404:
      expect(body.detail, where).toBe(DETAIL.notFound);
      break;
    case 405:
      expect(body.detail, where).toBe(DETAIL.methodNotAllowed);
      expect(response.headers.allow, where).toMatch(/^[A-Z]+(, [A-Z]+)*$/);
      break;
    case 413:
      expect(body.detail, where).toBe(DETAIL.tooLarge);
      break;
    case 422: {
      expect(Array.isArray(body.detail) && body.detail.length > 0, where).toBe(true);
      for (const item of body.detail as Record<string, unknown>[]) {
        expect(Object.keys(item).every((key) => ITEM_KEYS.has(key)), where).toBe(true);
        expect(typeof item.type, where).toBe('string');
        expect(typeof item.msg, where).toBe('string');
        expect('input' in item, where).toBe(true);
        expect(Array.isArray(item.loc) && item.loc[0] === 'body', where).toBe(true);
        expect((item.loc as unknown[]).every((part) => typeof part === 'string' || Number.isInteger(part)), where).toBe(true);
      }
      break;
    }
  }
}

// ---- arbitraries -------------------------------------------------------------------------------

const text = (maxLength: number) =>
  fc.oneof(fc.string({ maxLength }), fc.string({ unit: 'grapheme', maxLength }), fc.string({ unit: 'binary', maxLength }), fc.string({ unit: 'binary-ascii', maxLength }));
const json = fc.jsonValue({ maxDepth: 3 });
const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,60}$/).map((value) => value.trim());

const contentType = fc.option(
  fc.oneof(
    fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'APPLICATION/JSON;CHARSET=UTF-16',
      'application/x+json',
      'application/vnd.school+json; v=2',
      'application/problem+json',
      'text/plain',
      'text/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=----x',
      'application/octet-stream',
      'application/jsonx',
      'json',
      '*/*',
      ';;;',
      'application/',
      '/json',
      'application/json; charset="',
      '',
    ),
    headerValue,
  ),
  { nil: undefined },
);

const extraHeaders = fc.dictionary(
  fc.oneof(
    fc.constantFrom(
      'accept',
      'accept-encoding',
      'accept-language',
      'authorization',
      'cookie',
      'origin',
      'referer',
      'user-agent',
      'x-forwarded-for',
      'x-forwarded-proto',
      'x-real-ip',
      'x-request-id',
      'content-encoding',
      'content-language',
      'if-none-match',
      'range',
      'connection',
    ),
    fc.stringMatching(/^x-[a-z0-9-]{1,20}$/),
  ),
  headerValue,
  { maxKeys: 5 },
);

/** A body for a POST: JSON text of any value, raw text, raw bytes, near-limit sizes, deep nesting. */
const rawBody = fc.oneof(
  json.map((value) => JSON.stringify(value)),
  text(300),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  fc.integer({ min: 16_300, max: 16_500 }).map((size) => `{"school_id":"${'s'.repeat(size - 16)}"}`),
  fc.integer({ min: 1, max: 3000 }).map((depth) => `${'{"a":['.repeat(depth)}${']}'.repeat(depth)}`),
  fc.constantFrom('', 'null', 'NaN', '-Infinity', '{"a":', '\ufeff{}', '{"password": "\\ud800"}', '{"__proto__": {"x": 1}}'),
);

describe.each(TEST_DIALECTS)('fuzzing every endpoint on %s', (dialect) => {
  let t: TestApp;
  let refreshToken = '';
  let accessToken = '';

  beforeAll(async () => {
    t = await createTestApp({ LOGIN_THROTTLE: 'off' }, dialect);
    const admin = await seedAdmin(t.services);
    const session = await signIn(t.app, admin);
    refreshToken = session.refresh_token;
    accessToken = session.access_token;
  });
  afterAll(async () => {
    // t is undefined when beforeAll failed.
    await t?.close();
  });

  const runs = dialect === 'sqlite' ? 1 : 0.5;
  const target = fc.constantFrom<PostTarget>('login', 'refresh', 'logout');

  it('POST: random bodies, media types and headers', async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(target, rawBody, contentType, extraHeaders, async (to, body, type, headers) => {
        const path = POST_PATHS[to];
        const response = await t.app.inject({
          method: 'POST',
          url: path,
          payload: body,
          headers: { ...headers, ...(type === undefined ? {} : { 'content-type': type }) },
        });
        expectDocumented('POST', path, response);
        seen.add(response.statusCode);
      }),
      { numRuns: Math.round(1200 * runs) },
    );
    // The generators reach every documented kind of refusal.
    for (const status of [400, 413, 422]) expect(seen, `status ${status} never produced`).toContain(status);
  }, 60_000);

  it('POST: objects with the real field names and random values, never echoing a secret', async () => {
    const secretText = (mark: string) => fc.string({ maxLength: 30 }).map((rest) => `${mark}${rest}`);
    const value = fc.oneof({ arbitrary: text(140), weight: 4 }, json, fc.constantFrom('lincoln-high', 'alice', 'LINCOLN-HIGH', 'ALICE'));
    const fields = fc.record(
      {
        school_id: value,
        username: value,
        password: fc.oneof({ arbitrary: secretText(PASSWORD_MARK), weight: 4 }, json, fc.constant(PASSWORD)),
        refresh_token: fc.oneof({ arbitrary: secretText(TOKEN_MARK), weight: 4 }, json, fc.constant('real')),
        extra: fc.oneof(json, fc.record({ password: secretText(PASSWORD_MARK), nested: fc.array(fc.record({ refresh_token: secretText(TOKEN_MARK) }), { maxLength: 2 }) })),
      },
      { requiredKeys: [] },
    );
    // One body in six carries the seeded admin's real credentials: the way to a 200.
    const body = fc.oneof(
      { arbitrary: fields, weight: 5 },
      fields.map((object) => ({ ...object, school_id: 'lincoln-high', username: 'alice', password: PASSWORD })),
    );
    const seen = new Set<number>();
    const jsonType = fc.constantFrom('application/json', 'application/json; charset=latin1', 'application/x+json', 'Application/JSON', undefined, 'text/plain');
    await fc.assert(
      fc.asyncProperty(target, body, jsonType, extraHeaders, async (to, object, type, headers) => {
        const record: Record<string, unknown> = { ...object };
        // A real, live refresh token now and then, so refresh 200 and logout 204 are reached too.
        if (record.refresh_token === 'real') record.refresh_token = refreshToken;
        const path = POST_PATHS[to];
        const response = await t.app.inject({
          method: 'POST',
          url: path,
          payload: JSON.stringify(record),
          headers: { ...headers, ...(type === undefined ? {} : { 'content-type': type }) },
        });
        expectDocumented('POST', path, response);
        expect(response.body).not.toContain(PASSWORD_MARK);
        expect(response.body).not.toContain(TOKEN_MARK);
        expect(response.body).not.toContain(PASSWORD);
        seen.add(response.statusCode);
      }),
      { numRuns: Math.round(600 * runs) },
    );
    for (const status of [200, 204, 401, 422]) expect(seen, `status ${status} never produced`).toContain(status);
  }, 60_000);

  it('GET and other methods: random paths, queries and headers (Authorization included)', async () => {
    const seen = new Set<number>();
    const path = fc.oneof(
      { arbitrary: fc.constantFrom(...GET_PATHS, ...Object.values(POST_PATHS)), weight: 4 },
      // Random paths, percent-encoded correctly (a malformed %-escape has its own test below).
      fc.stringMatching(/^\/[A-Za-z0-9._~!$&'()*+,;=:@/%-]{0,40}$/).map((raw) => raw.replace(/%(?![0-9A-Fa-f]{2})/g, '%25')),
    );
    const query = fc.option(fc.stringMatching(/^[A-Za-z0-9=&%+._-]{0,30}$/), { nil: undefined });
    const method = fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH');
    const authorization = fc.option(
      fc.oneof(
        headerValue,
        headerValue.map((value) => `Bearer ${value}`),
        fc.constant('real'),
        fc.constantFrom('Bearer', 'Bearer ', 'bearer x.y.z', 'Basic YTpi', 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.'),
      ),
      { nil: undefined },
    );
    await fc.assert(
      fc.asyncProperty(method, path, query, authorization, extraHeaders, async (verb, where, search, auth, headers) => {
        const url = search === undefined ? where : `${where}?${search}`;
        const all: Record<string, string> = { ...headers };
        if (auth !== undefined) all.authorization = auth === 'real' ? `Bearer ${accessToken}` : auth;
        const response = await t.app.inject({ method: verb as 'GET', url, headers: all, ...(verb === 'GET' || verb === 'HEAD' ? {} : { payload: '{}' }) });
        expectDocumented(verb, url, response);
        seen.add(response.statusCode);
      }),
      { numRuns: Math.round(800 * runs) },
    );
    for (const status of [200, 401, 404, 405]) expect(seen, `status ${status} never produced`).toContain(status);
  }, 60_000);

  it.each(['/%', '/admin/auth/%zz', '/auth/refresh%', '/%E0%A4%A'])('answers the malformed path %s with a documented 400 or 404 body', async (url) => {
    for (const method of ['GET', 'POST'] as const) {
      const response = await t.app.inject({ method, url, headers: { 'content-type': 'application/json' }, ...(method === 'POST' ? { payload: '{}' } : {}) });
      expectDocumented(method, url, response);
    }
  });
});
