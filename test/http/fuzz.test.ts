import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PASSWORD, createTestApp, seedAdmin, type TestApp } from '../helpers/app.js';
import { ENDPOINTS } from '../helpers/contract.js';
import { TEST_DIALECTS } from '../helpers/database.js';

type Endpoint = 'login' | 'refresh' | 'logout';

/** The statuses documented for each POST endpoint (429: login throttling). */
const DOCUMENTED: Record<Endpoint, readonly number[]> = {
  login: [200, 400, 401, 413, 422, 429],
  refresh: [200, 400, 401, 413, 422],
  logout: [204, 400, 413, 422],
};
const FIELDS: Record<Endpoint, readonly string[]> = {
  login: ['school_id', 'username', 'password'],
  refresh: ['refresh_token'],
  logout: ['refresh_token'],
};
const LIMITS: Record<string, number> = { school_id: 128, username: 256, password: 1024, refresh_token: 512 };
const SECRET_MARK = 'S3CRET';
const SEEDED = { school_id: 'lincoln-high', username: 'alice', password: PASSWORD };

const endpoint = fc.constantFrom<Endpoint>('login', 'refresh', 'logout');
const contentType = fc.option(
  fc.oneof(
    fc.constantFrom(
      'application/json',
      'application/vnd.api+json',
      'APPLICATION/JSON; charset=utf-8',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      'application/json; charset=latin1',
    ),
    fc.stringMatching(/^[a-zA-Z0-9!#$&^_.+-]{1,20}\/[a-zA-Z0-9!#$&^_.+-]{1,20}(; ?[a-z]{1,8}=[a-zA-Z0-9-]{1,8})?$/),
  ),
  { nil: undefined },
);
/** U+0000 and lone surrogates included: the HTTP boundary keeps them from every query. */
const TRICKY = ['\u0000', '\u0001', '\u001f', '\u007f', '\ud800', '\udfff', '\ufeff', '\u0301', 'ß', 'ﬃ', 'Ａ', 'İ', 'ﷺ', '😀', '"', '\\', "'", ' ', 'a'];
const unicodeText = (maxLength: number) =>
  fc.oneof(fc.string({ unit: 'binary', maxLength }), fc.string({ unit: fc.constantFrom(...TRICKY), maxLength }));
const anyValue = fc.oneof(fc.string({ maxLength: 300 }), unicodeText(300), fc.jsonValue({ maxDepth: 3 }), fc.constant(null));
const fieldObject = fc.dictionary(fc.constantFrom('school_id', 'username', 'password', 'refresh_token', 'extra', '__proto__'), anyValue);
/** Text a client might send: JSON of any shape, near-JSON, Python-only literals, arbitrary text. */
const payload = fc.oneof(
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fieldObject.map((value) => JSON.stringify(value)),
  // The seeded administrator's credentials among random extra members: the way to a 200.
  fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 })).map((extra) => JSON.stringify({ ...extra, ...SEEDED })),
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom('{"a":', '[', '{"school_id": NaN}', '{"refresh_token": -Infinity}', 'NaN', '\uFEFF{}', '{"a":"\\ud800"}'),
  fc.integer({ min: 1, max: 700 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  fc.integer({ min: 16_000, max: 17_000 }).map((size) => `{"refresh_token": "${'x'.repeat(size)}"}`),
);

/** A random IP per request, so no throttling layer sees many failures from one client. */
const clientIp = fc.tuple(fc.integer({ min: 1, max: 223 }), fc.nat(255), fc.nat(255), fc.integer({ min: 1, max: 254 })).map((parts) => parts.join('.'));

function post(t: TestApp, target: Endpoint, body: string | Buffer, type: string | undefined, ip: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: ENDPOINTS[target],
    payload: body,
    headers: type === undefined ? {} : { 'content-type': type },
    remoteAddress: ip,
  });
}

function expectDocumentedAnswer(target: Endpoint, response: LightMyRequestResponse) {
  expect(DOCUMENTED[target], `${target} answered ${response.statusCode}: ${response.body}`).toContain(response.statusCode);
  if (response.statusCode === 204) {
    expect(response.body).toBe('');
    return;
  }
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = response.json();
  if (response.statusCode === 200) return;
  expect(Object.keys(body)).toEqual(['detail']);
  if (response.statusCode !== 422) {
    expect(typeof body.detail).toBe('string');
    return;
  }
  expect(Array.isArray(body.detail) && body.detail.length > 0).toBe(true);
  for (const item of body.detail) {
    expect(Object.keys(item).filter((key) => key !== 'ctx')).toEqual(['type', 'loc', 'msg', 'input']);
    expect(item.loc[0]).toBe('body');
  }
}

describe.each(TEST_DIALECTS)('fuzzing the POST endpoints on %s', (dialect) => {
  const numRuns = dialect === 'sqlite' ? 300 : 100;
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({}, dialect);
    await seedAdmin(t.services);
  });
  afterEach(() => t.close());

  it('answers any body, bytes and media type with a documented status and a detail, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(endpoint, payload, contentType, clientIp, async (target, body, type, ip) => {
        expectDocumentedAnswer(target, await post(t, target, body, type, ip));
      }),
      { numRuns },
    );
  }, 120_000);

  it('validates JSON objects as the model says, and never echoes a secret', async () => {
    const secret = fc.string({ maxLength: 40 }).map((text) => `${SECRET_MARK}${text}`);
    const text = fc.oneof(
      { arbitrary: fc.string({ maxLength: 20 }), weight: 2 },
      { arbitrary: unicodeText(40), weight: 3 },
      fc.string({ minLength: 120, maxLength: 140 }),
      fc.string({ minLength: 250, maxLength: 260 }),
    );
    const notText = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(null)).filter((member) => typeof member !== 'string');
    const value = fc.oneof({ arbitrary: text, weight: 3 }, notText);
    const fields = {
      school_id: value,
      username: value,
      password: fc.oneof({ arbitrary: secret, weight: 3 }, notText),
      refresh_token: fc.oneof({ arbitrary: secret, weight: 3 }, notText),
      extra: fc.oneof(value, fc.record({ password: secret, list: fc.array(fc.record({ refresh_token: secret }), { maxLength: 2 }) })),
    };
    // Complete bodies half of the time, so valid ones (and what lies past validation) are common.
    const body = fc.oneof(fc.record(fields), fc.record(fields, { requiredKeys: [] }));
    await fc.assert(
      fc.asyncProperty(endpoint, body, clientIp, async (target, object, ip) => {
        const response = await post(t, target, JSON.stringify(object), 'application/json', ip);
        expectDocumentedAnswer(target, response);
        const record = object as Record<string, unknown>;
        const valid = FIELDS[target].every((field) => {
          const member = record[field];
          return typeof member === 'string' && [...member].length <= LIMITS[field]!;
        });
        const expected = !valid ? 422 : target === 'logout' ? 204 : 401;
        // Throttling (429) may only ever replace a refused login, never a validation error.
        const throttled = response.statusCode === 429 && target === 'login' && expected === 401;
        expect(throttled ? expected : response.statusCode, response.body).toBe(expected);
        expect(response.body).not.toContain(SECRET_MARK);
      }),
      { numRuns },
    );
  }, 120_000);
});
