import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, postJson, seedAdmin, type TestApp } from '../../helpers/app.js';
import { ENDPOINTS, postRaw } from '../../helpers/contract.js';
import { TEST_DIALECTS } from '../../helpers/database.js';

/** The strings of FastAPI's (Pydantic v2's) 422 items. */
const FIELD_REQUIRED = 'Field required';
const NOT_A_STRING = 'Input should be a valid string';
const NOT_A_DICT = 'Input should be a valid dictionary or object to extract fields from';
const REDACTED = '[redacted]';

const missing = (field: string, input: unknown) => ({ type: 'missing', loc: ['body', field], msg: FIELD_REQUIRED, input });
const notString = (field: string, input: unknown) => ({ type: 'string_type', loc: ['body', field], msg: NOT_A_STRING, input });
const notADict = (input: unknown) => [{ type: 'model_attributes_type', loc: ['body'], msg: NOT_A_DICT, input }];
const bodyMissing = [{ type: 'missing', loc: ['body'], msg: FIELD_REQUIRED, input: null }];
const jsonInvalid = (position: number, error: string) => [
  { type: 'json_invalid', loc: ['body', position], msg: 'JSON decode error', input: {}, ctx: { error } },
];

describe.each(TEST_DIALECTS)('422 validation bodies on %s', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({}, dialect);
  });
  afterEach(() => t.close());

  async function expect422(url: string, payload: string | Buffer, contentType: string | undefined, detail: unknown[]) {
    const response = await postRaw(t.app, url, payload, contentType);
    expect(response.statusCode, `${url} ${String(payload)}`).toBe(422);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.json()).toEqual({ detail });
    return response;
  }
  const json = 'application/json';

  it('lists missing login fields in declaration order, echoing the redacted body', async () => {
    await expect422(ENDPOINTS.login, '{}', json, [missing('school_id', {}), missing('username', {}), missing('password', {})]);
    const partial = { password: 'hunter2-secret', school_id: 'lincoln' };
    await expect422(ENDPOINTS.login, JSON.stringify(partial), json, [missing('username', { password: REDACTED, school_id: 'lincoln' })]);
    const onlyPassword = { password: 'hunter2-secret', remember: true };
    const echoed = { password: REDACTED, remember: true };
    await expect422(ENDPOINTS.login, JSON.stringify(onlyPassword), json, [missing('school_id', echoed), missing('username', echoed)]);
  });

  it('reports missing refresh_token for refresh and logout with the redacted body', async () => {
    for (const url of [ENDPOINTS.refresh, ENDPOINTS.logout]) {
      await expect422(url, '{}', json, [missing('refresh_token', {})]);
      // `token` is a misnamed refresh token: named like a secret, so redacted too.
      const body = { token: 'abc', school_id: 's', password: 'p4ss', nested: [{ refresh_token: 'rt-secret' }] };
      const echoed = { token: REDACTED, school_id: 's', password: REDACTED, nested: [{ refresh_token: REDACTED }] };
      await expect422(url, JSON.stringify(body), json, [missing('refresh_token', echoed)]);
    }
  });

  it('reports wrong types, null included, with the value (secrets redacted)', async () => {
    await expect422(ENDPOINTS.login, '{"school_id": 1, "username": null, "password": true}', json, [
      notString('school_id', 1),
      notString('username', null),
      notString('password', REDACTED),
    ]);
    await expect422(ENDPOINTS.login, '{"school_id": ["a", {"password": "x"}], "username": {"k": 1.5}, "password": {"a": 1}}', json, [
      notString('school_id', ['a', { password: REDACTED }]),
      notString('username', { k: 1.5 }),
      notString('password', REDACTED),
    ]);
    for (const url of [ENDPOINTS.refresh, ENDPOINTS.logout]) {
      for (const value of ['null', '42', 'false', '["rt"]', '{"a":"b"}']) {
        await expect422(url, `{"refresh_token": ${value}}`, json, [notString('refresh_token', REDACTED)]);
      }
    }
  });

  it('mixes item kinds in declaration order, not in body order', async () => {
    const body = `{"password": 5, "school_id": "${'s'.repeat(129)}"}`;
    await expect422(ENDPOINTS.login, body, json, [
      { type: 'string_too_long', loc: ['body', 'school_id'], msg: 'String should have at most 128 characters', input: 's'.repeat(129), ctx: { max_length: 128 } },
      missing('username', { password: REDACTED, school_id: 's'.repeat(129) }),
      notString('password', REDACTED),
    ]);
  });

  it('answers model_attributes_type for a JSON body that is not an object', async () => {
    for (const url of [ENDPOINTS.login, ENDPOINTS.refresh, ENDPOINTS.logout]) {
      await expect422(url, '[1, "two", null]', json, notADict([1, 'two', null]));
      await expect422(url, '[{"password": "p", "refresh_token": "r", "x": 1}]', json, notADict([{ password: REDACTED, refresh_token: REDACTED, x: 1 }]));
      await expect422(url, '"just a string"', json, notADict('just a string'));
      await expect422(url, '42', json, notADict(42));
      await expect422(url, '-1.5', json, notADict(-1.5));
      await expect422(url, 'true', json, notADict(true));
      await expect422(url, 'false', json, notADict(false));
    }
  });

  it('answers missing at ["body"] for an empty body or JSON null', async () => {
    for (const url of [ENDPOINTS.login, ENDPOINTS.refresh, ENDPOINTS.logout]) {
      await expect422(url, '', json, bodyMissing);
      await expect422(url, 'null', json, bodyMissing);
      await expect422(url, ' null\n', json, bodyMissing);
      await expect422(url, '', undefined, bodyMissing);
      await expect422(url, '', 'text/plain', bodyMissing);
    }
  });

  it('validates a non-JSON media type as text and never echoes it', async () => {
    const admin = await seedAdmin(t.services);
    const asJson = JSON.stringify({ school_id: admin.schoolId, username: admin.username, password: admin.password });
    for (const url of [ENDPOINTS.login, ENDPOINTS.refresh, ENDPOINTS.logout]) {
      for (const contentType of ['text/plain', 'text/json', 'application/x-www-form-urlencoded', 'application/jsonx', 'multipart/form-data', undefined]) {
        const response = await expect422(url, asJson, contentType, notADict(REDACTED));
        expect(response.body).not.toContain(admin.password);
      }
      await expect422(url, `school_id=a&username=b&password=${encodeURIComponent(admin.password)}`, 'application/x-www-form-urlencoded', notADict(REDACTED));
    }
  });

  it('parses application/*+json and any-case JSON media types with parameters', async () => {
    const admin = await seedAdmin(t.services);
    const asJson = JSON.stringify({ school_id: admin.schoolId, username: admin.username, password: admin.password });
    for (const contentType of ['application/vnd.api+json', 'Application/JSON; charset=utf-8', 'APPLICATION/JSON', 'application/json;charset=UTF-8', 'application/merge-patch+json; x=y']) {
      expect((await postRaw(t.app, ENDPOINTS.login, asJson, contentType)).statusCode, contentType).toBe(200);
      await expect422(ENDPOINTS.refresh, '{}', contentType, [missing('refresh_token', {})]);
    }
  });

  it.each<[string, number, string]>([
    ['{"a":', 5, 'Expecting value'],
    ['{"a" 1}', 5, "Expecting ':' delimiter"],
    ["{'a':1}", 1, 'Expecting property name enclosed in double quotes'],
    ['{"a": "b', 6, 'Unterminated string starting at'],
    ['[1 2]', 3, "Expecting ',' delimiter"],
    ['{"a":1}x', 7, 'Extra data'],
    ['{"a":1,}', 7, 'Expecting property name enclosed in double quotes'],
    ['   ', 3, 'Expecting value'],
    ['tru', 0, 'Expecting value'],
    ['{"a":"\\x"}', 6, 'Invalid \\escape'],
    // Positions count code points, as Python does: the emoji is one, not two UTF-16 units.
    ['{"😀😀":', 6, 'Expecting value'],
  ])('answers json_invalid with Python position and message for %j', async (text, position, message) => {
    for (const url of [ENDPOINTS.login, ENDPOINTS.refresh, ENDPOINTS.logout]) {
      await expect422(url, text, json, jsonInvalid(position, message));
    }
  });

  it('answers 422 string_type, never 500, for NaN and Infinity (echoed as null)', async () => {
    await expect422(ENDPOINTS.login, '{"school_id": NaN, "username": [Infinity, -Infinity], "password": NaN}', json, [
      notString('school_id', null),
      notString('username', [null, null]),
      notString('password', REDACTED),
    ]);
    await expect422(ENDPOINTS.refresh, '{"refresh_token": Infinity}', json, [notString('refresh_token', REDACTED)]);
    // Overflowing numbers are infinite floats to Python too.
    await expect422(ENDPOINTS.login, '{"school_id": 1e400, "username": -1e400, "password": 1e400}', json, [
      notString('school_id', null),
      notString('username', null),
      notString('password', REDACTED),
    ]);
    await expect422(ENDPOINTS.logout, 'NaN', json, notADict(null));
    await expect422(ENDPOINTS.login, '{"username": "u", "password": "p", "x": NaN}', json, [missing('school_id', { username: 'u', password: REDACTED, x: null })]);
  });

  it('never echoes a password or refresh token, at any depth, whatever the item', async () => {
    const secret = 'Sup3r-Secr3t-Value';
    const bodies = [
      { password: secret },
      { school_id: { password: secret }, username: 'u', password: secret },
      { school_id: 'a', username: [[{ deep: { password: secret, refresh_token: secret } }]], password: 1 },
      { school_id: 'a', password: secret, extra: { list: [{ refresh_token: secret }] } },
      { refresh_token: [secret] },
      { other: { refresh_token: secret } },
      [{ password: secret }, { refresh_token: secret }],
    ];
    for (const url of [ENDPOINTS.login, ENDPOINTS.refresh, ENDPOINTS.logout]) {
      for (const body of bodies) {
        const response = await postJson(t.app, url, body);
        expect(response.statusCode, JSON.stringify(body)).toBe(422);
        expect(response.body).not.toContain(secret);
        expect(response.body).toContain(REDACTED);
      }
    }
  });

  it('keeps the last of duplicate members, as Python does', async () => {
    await expect422(ENDPOINTS.refresh, '{"refresh_token": "r", "refresh_token": 5}', json, [notString('refresh_token', REDACTED)]);
    const response = await postRaw(t.app, ENDPOINTS.refresh, '{"refresh_token": 5, "refresh_token": "r"}', json);
    expect(response.statusCode).toBe(401);
  });

  it('keeps a __proto__ member as data when echoing the body', async () => {
    await expect422(ENDPOINTS.refresh, '{"__proto__": {"refresh_token": "r", "a": 1}}', json, [
      missing('refresh_token', JSON.parse('{"__proto__": {"refresh_token": "[redacted]", "a": 1}}')),
    ]);
  });

  it('accepts empty strings and ignores unknown fields', async () => {
    const admin = await seedAdmin(t.services);
    const empty = await postJson(t.app, ENDPOINTS.login, { school_id: '', username: '', password: '' });
    expect(empty.statusCode).toBe(401);
    expect((await postJson(t.app, ENDPOINTS.refresh, { refresh_token: '' })).statusCode).toBe(401);
    expect((await postJson(t.app, ENDPOINTS.logout, { refresh_token: '' })).statusCode).toBe(204);
    const extra = await postJson(t.app, ENDPOINTS.login, {
      school_id: admin.schoolId,
      username: admin.username,
      password: admin.password,
      remember_me: true,
      grant_type: null,
    });
    expect(extra.statusCode).toBe(200);
    const refreshed = await postJson(t.app, ENDPOINTS.refresh, { refresh_token: extra.json().refresh_token, scope: ['x'], password: 1 });
    expect(refreshed.statusCode).toBe(200);
  });
});
