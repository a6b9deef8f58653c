import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTestApp, postJson, seedAdmin, type TestApp } from '../../helpers/app.js';
import { BODIES, ENDPOINTS, auditEvents, postRaw } from '../../helpers/contract.js';
import { TEST_DIALECTS } from '../../helpers/database.js';

const REDACTED = '[redacted]';
const tooLong = (field: string, max: number, input: unknown) => ({
  type: 'string_too_long',
  loc: ['body', field],
  msg: `String should have at most ${max} characters`,
  input,
  ctx: { max_length: max },
});

/** `[[[...]]]` nested `depth` levels deep. */
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe.each(TEST_DIALECTS)('body limits and unparsable bodies on %s', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({}, dialect);
  });
  afterEach(() => t.close());

  it('refuses fields one character over their limit with string_too_long', async () => {
    const login = { school_id: 'S'.repeat(129), username: 'U'.repeat(257), password: 'P'.repeat(1025) };
    const response = await postJson(t.app, ENDPOINTS.login, login);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      detail: [tooLong('school_id', 128, login.school_id), tooLong('username', 256, login.username), tooLong('password', 1024, REDACTED)],
    });
    for (const url of [ENDPOINTS.refresh, ENDPOINTS.logout]) {
      const tooLongToken = await postJson(t.app, url, { refresh_token: 'r'.repeat(513) });
      expect(tooLongToken.statusCode).toBe(422);
      expect(tooLongToken.json()).toEqual({ detail: [tooLong('refresh_token', 512, REDACTED)] });
    }
  });

  it('accepts fields exactly at their limit: the login is then refused, not invalid', async () => {
    const atLimit = { school_id: 'S'.repeat(128), username: 'U'.repeat(256), password: 'P'.repeat(1024) };
    const response = await postJson(t.app, ENDPOINTS.login, atLimit);
    expect(response.statusCode).toBe(401);
    expect(response.body).toBe(BODIES.loginRefused);
    expect((await postJson(t.app, ENDPOINTS.refresh, { refresh_token: 'r'.repeat(512) })).body).toBe(BODIES.invalidRefreshToken);
    expect((await postJson(t.app, ENDPOINTS.logout, { refresh_token: 'r'.repeat(512) })).statusCode).toBe(204);
  });

  it('counts lengths in code points, as Python does', async () => {
    const emoji = '😀';
    const atLimit = await postJson(t.app, ENDPOINTS.login, { school_id: emoji.repeat(128), username: 'u', password: 'p' });
    expect(atLimit.statusCode).toBe(401);
    const over = await postJson(t.app, ENDPOINTS.login, { school_id: emoji.repeat(129), username: 'u', password: 'p' });
    expect(over.statusCode).toBe(422);
    expect(over.json().detail).toEqual([tooLong('school_id', 128, emoji.repeat(129))]);
  });

  it('answers 400 for body bytes that are not UTF-8, whatever the media type', async () => {
    const invalid = [
      Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), // {"a":"\xff"}
      Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x22, 0x7d]), // truncated sequence
      Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]), // an encoded surrogate
      Buffer.from([0x22, 0xc0, 0xaf, 0x22]), // overlong encoding
    ];
    for (const url of [ENDPOINTS.login, ENDPOINTS.refresh, ENDPOINTS.logout]) {
      for (const payload of invalid) {
        for (const contentType of ['application/json', 'text/plain']) {
          const response = await postRaw(t.app, url, payload, contentType);
          expect(response.statusCode, `${url} ${payload.toString('hex')} ${contentType}`).toBe(400);
          expect(response.body).toBe(BODIES.unparsable);
        }
      }
    }
  });

  it('answers 400 for JSON nested 600 deep, anywhere in the body', async () => {
    const deepInField = `{"school_id": "a", "username": "b", "password": "c", "x": ${nested(600)}}`;
    for (const url of [ENDPOINTS.login, ENDPOINTS.refresh, ENDPOINTS.logout]) {
      for (const payload of [nested(600), deepInField, `{"a": ${'{"a": '.repeat(600)}1${'}'.repeat(601)}`]) {
        const response = await postRaw(t.app, url, payload, 'application/json');
        expect(response.statusCode, url).toBe(400);
        expect(response.body).toBe(BODIES.unparsable);
      }
    }
  });

  it('still validates bodies nested as deep as the documented 512 levels', async () => {
    const response = await postRaw(t.app, ENDPOINTS.refresh, nested(512), 'application/json');
    expect(response.statusCode).toBe(422);
    expect(response.json().detail[0]).toMatchObject({ type: 'model_attributes_type', loc: ['body'] });
  });

  it('answers 413 for a body over 16 KiB, and not for one of exactly 16 KiB', async () => {
    const limit = 16 * 1024;
    const padded = (size: number) => {
      const head = '{"refresh_token": "x", "pad": "';
      return head + 'p'.repeat(size - head.length - 2) + '"}';
    };
    expect(Buffer.byteLength(padded(limit))).toBe(limit);
    for (const url of [ENDPOINTS.login, ENDPOINTS.refresh, ENDPOINTS.logout]) {
      for (const contentType of ['application/json', 'text/plain', undefined]) {
        const response = await postRaw(t.app, url, padded(limit + 1), contentType);
        expect(response.statusCode, `${url} ${contentType}`).toBe(413);
        expect(response.body).toBe(BODIES.tooLarge);
      }
      const big = await postRaw(t.app, url, Buffer.alloc(1024 * 1024, 0x20), 'application/json');
      expect(big.statusCode).toBe(413);
      expect(big.body).toBe(BODIES.tooLarge);
    }
    expect((await postRaw(t.app, ENDPOINTS.refresh, padded(limit), 'application/json')).statusCode).toBe(401);
    expect((await postRaw(t.app, ENDPOINTS.logout, padded(limit), 'application/json')).statusCode).toBe(204);
  });

  it('decides malformed bodies before any lookup: no password check, no audit event', async () => {
    const admin = await seedAdmin(t.services);
    const before = await auditEvents(t);
    const verify = vi.spyOn(t.services.hasher, 'verify');
    const good = { school_id: admin.schoolId, username: admin.username, password: admin.password };
    const malformed: [string, string | Buffer, string | undefined][] = [
      [ENDPOINTS.login, JSON.stringify({ ...good, password: 7 }), 'application/json'],
      [ENDPOINTS.login, JSON.stringify({ ...good, username: null }), 'application/json'],
      [ENDPOINTS.login, JSON.stringify({ school_id: admin.schoolId, username: admin.username }), 'application/json'],
      [ENDPOINTS.login, JSON.stringify({ ...good, school_id: `${admin.schoolId}${' '.repeat(200)}` }), 'application/json'],
      [ENDPOINTS.login, JSON.stringify(good), 'text/plain'],
      [ENDPOINTS.login, JSON.stringify(good).slice(0, -1), 'application/json'],
      [ENDPOINTS.login, Buffer.concat([Buffer.from('{"school_id":"'), Buffer.from([0xff]), Buffer.from('"}')]), 'application/json'],
      [ENDPOINTS.login, `{"a": ${nested(600)}}`, 'application/json'],
      [ENDPOINTS.login, 'x'.repeat(20_000), 'application/json'],
      [ENDPOINTS.login, `{"school_id": NaN, "username": "${admin.username}", "password": "${admin.password}"}`, 'application/json'],
    ];
    for (const [url, payload, contentType] of malformed) {
      expect((await postRaw(t.app, url, payload, contentType)).statusCode).toBeGreaterThanOrEqual(400);
    }
    expect(verify).not.toHaveBeenCalled();
    expect(await auditEvents(t)).toEqual(before);
    const { refresh_token: refreshToken } = (await postJson(t.app, ENDPOINTS.login, good)).json();
    verify.mockClear();
    const afterLogin = await auditEvents(t);
    for (const url of [ENDPOINTS.logout, ENDPOINTS.refresh]) {
      expect((await postRaw(t.app, url, JSON.stringify({ refresh_token: refreshToken }), 'text/plain')).statusCode).toBe(422);
      expect((await postRaw(t.app, url, JSON.stringify({ token: refreshToken }), 'application/json')).statusCode).toBe(422);
    }
    expect(verify).not.toHaveBeenCalled();
    expect(afterLogin.map((event) => event.type)).toEqual([...before.map((event) => event.type), 'login.success']);
    expect(await auditEvents(t)).toHaveLength(afterLogin.length);
    // The session was not ended by the malformed logout.
    expect((await postJson(t.app, ENDPOINTS.refresh, { refresh_token: refreshToken })).statusCode).toBe(200);
  });
});
