import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, postJson, seedAdmin, signIn, type TestApp } from '../../helpers/app.js';
import { BODIES, ENDPOINTS } from '../../helpers/contract.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { bearer } from '../../helpers/mfa.js';
import { PASSKEY_ENV } from '../../helpers/webauthn-flow.js';

// PostgreSQL text cannot hold U+0000, and a lone surrogate is not text in any encoding: such a
// string must never reach a query. Ids answer 404 (no record can have one); other body fields get
// one FastAPI-style 422 item; the bodies of the original contract keep their answers.

const NUL_ITEM = { type: 'string_pattern_mismatch', msg: "String should match pattern '^[^\\x00]*$'", ctx: { pattern: '^[^\\x00]*$' } };
const SURROGATE_ITEM = { type: 'string_unicode', msg: 'Input should be a valid string, unable to parse raw data as a unicode string' };

describe.each(TEST_DIALECTS)('NUL and lone surrogates at the boundary on %s', (dialect) => {
  let t: TestApp;
  let token: string;
  beforeEach(async () => {
    t = await createTestApp({ ...PASSKEY_ENV }, dialect);
    const admin = await seedAdmin(t.services);
    token = (await signIn(t.app, admin)).access_token;
  });
  afterEach(() => t.close());

  it('an id in the path with NUL answers 404, never a 500', async () => {
    for (const url of ['/admin/auth/sessions/%00', '/admin/auth/sessions/a%00b', '/admin/auth/mfa/%00']) {
      const response = await t.app.inject({ method: 'DELETE', url, headers: bearer(token) });
      expect(response.statusCode, url).toBe(404);
      expect(response.body).toBe(BODIES.notFound);
    }
  });

  it('without a valid bearer token the session route still answers 401 first', async () => {
    const response = await t.app.inject({ method: 'DELETE', url: '/admin/auth/sessions/%00' });
    expect(response.statusCode).toBe(401);
  });

  it('a NUL factor_id at totp/confirm is a 422 item for that field', async () => {
    const response = await postJson(t.app, '/admin/auth/mfa/totp/confirm', { factor_id: 'f\u0000', code: '123456' }, bearer(token));
    expect(response.statusCode, response.body).toBe(422);
    expect(response.json()).toEqual({ detail: [{ ...NUL_ITEM, loc: ['body', 'factor_id'], input: 'f\u0000' }] });
  });

  it('a lone surrogate in a body field is a 422 string_unicode item', async () => {
    const response = await postJson(t.app, '/admin/auth/mfa/totp/confirm', { factor_id: '\ud800', code: '123456' }, bearer(token));
    expect(response.statusCode, response.body).toBe(422);
    expect(response.json()).toEqual({ detail: [{ ...SURROGATE_ITEM, loc: ['body', 'factor_id'], input: '\ufffd' }] });
  });

  it('a NUL passkey name, credential id or challenge is a 422 item at its place, secrets redacted', async () => {
    const credential = { id: 'a\u0000', rawId: 'a', type: 'public-key', response: { clientDataJSON: 'x\u0000' } };
    const registered = await postJson(t.app, '/admin/auth/mfa/webauthn', { credential, name: 'key\u0000' }, bearer(token));
    expect(registered.statusCode, registered.body).toBe(422);
    expect(registered.json<{ detail: { loc: unknown[] }[] }>().detail.map((item) => item.loc)).toEqual([
      ['body', 'credential', 'id'],
      ['body', 'credential', 'response', 'clientDataJSON'],
      ['body', 'name'],
    ]);
    const options = await postJson(t.app, '/admin/auth/mfa/webauthn/options', { mfa_token: 'x\u0000' });
    expect(options.statusCode, options.body).toBe(422);
    expect(options.json()).toEqual({ detail: [{ ...NUL_ITEM, loc: ['body', 'mfa_token'], input: '[redacted]' }] });
  });

  it('a NUL challenge inside clientDataJSON is a refused passkey, the same on both databases', async () => {
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge: 'a\u0000', origin: 'x' })).toString('base64url');
    const credential = { id: 'a', rawId: 'a', type: 'public-key', response: { clientDataJSON, attestationObject: 'a' } };
    const registered = await postJson(t.app, '/admin/auth/mfa/webauthn', { credential }, bearer(token));
    expect(registered.statusCode, registered.body).toBe(400);
    expect(registered.json()).toEqual({ detail: 'Passkey registration failed' });
  });

  it('login and refresh keep the answers of the original contract: the one 401', async () => {
    for (const field of ['school_id', 'username', 'password']) {
      for (const bad of ['\u0000', '\ud800']) {
        const body = { school_id: 'lincoln-high', username: 'alice', password: 'correct horse battery staple', [field]: `x${bad}` };
        const response = await postJson(t.app, ENDPOINTS.login, body);
        expect(response.statusCode, `${field} ${JSON.stringify(bad)}`).toBe(401);
        expect(response.body).toBe(BODIES.loginRefused);
      }
    }
    for (const bad of ['\u0000', '\ud800']) {
      const refreshed = await postJson(t.app, ENDPOINTS.refresh, { refresh_token: bad });
      expect(refreshed.statusCode).toBe(401);
      expect(refreshed.body).toBe(BODIES.invalidRefreshToken);
      const loggedOut = await postJson(t.app, ENDPOINTS.logout, { refresh_token: bad });
      expect(loggedOut.statusCode).toBe(204);
    }
  });

  it('a NUL revocation cursor is a 422 item for the query parameter', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/auth/revocations?since=%00' });
    expect(response.statusCode, response.body).toBe(422);
    expect(response.json()).toEqual({ detail: [{ ...NUL_ITEM, loc: ['query', 'since'], input: '\u0000' }] });
  });
});
