import type { LightMyRequestResponse } from 'fastify';
import { SignJWT, base64url, decodeJwt, decodeProtectedHeader, exportSPKI, generateKeyPair, importJWK, type CryptoKey, type JWTPayload } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setAdminEnabled } from '../../src/auth/accounts/admins.js';
import { suspendSchool } from '../../src/auth/accounts/schools.js';
import { revokeSessionById } from '../../src/auth/accounts/session-control.js';
import { PASSWORD, createTestApp, seedAdmin, signIn, type TestApp } from '../helpers/app.js';
import { BODIES, ENDPOINTS, logout, me, nowSeconds, storedSigningKeys } from '../helpers/contract.js';
import { TEST_DIALECTS } from '../helpers/database.js';

function expectUnauthorized(response: LightMyRequestResponse, why: string) {
  expect(response.statusCode, why).toBe(401);
  expect(response.body, why).toBe(BODIES.invalidAccessToken);
  expect(response.headers['www-authenticate'], why).toBe('Bearer');
}

const encodeSegment = (value: unknown) => base64url.encode(JSON.stringify(value));

describe.each(TEST_DIALECTS)('GET /admin/auth/me on %s', (dialect) => {
  let t: TestApp;
  let accessToken: string;
  let payload: JWTPayload;
  beforeEach(async () => {
    t = await createTestApp({}, dialect);
    const admin = await seedAdmin(t.services, { schoolId: 'Lincoln-High', username: 'Alice' });
    accessToken = (await signIn(t.app, admin)).access_token;
    payload = decodeJwt(accessToken);
  });
  afterEach(() => t.close());

  /** Signs `claims` with the service's own private key: a token only the header/claims make wrong. */
  async function signWithServiceKey(claims: JWTPayload, header: Record<string, unknown> = {}) {
    const [key] = await storedSigningKeys(t);
    return new SignJWT(claims).setProtectedHeader({ alg: key!.alg, typ: 'at+jwt', kid: key!.kid, ...header }).sign(key!.privateKey);
  }

  it('answers who the token belongs to', async () => {
    const response = await me(t.app, accessToken);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(['acr', 'amr', 'exp', 'iat', 'school_id', 'sid', 'sub', 'username']);
    expect(body).toEqual({ sub: payload.sub, school_id: 'Lincoln-High', username: 'Alice', sid: payload.sid, iat: nowSeconds(t), exp: nowSeconds(t) + 900, acr: 'aal1', amr: ['pwd'] });
    expect(typeof body.sub).toBe('string');
    expect(typeof body.sid).toBe('string');
  });

  it('accepts a token the test re-signs with the service key (control for the forgeries below)', async () => {
    expect((await me(t.app, await signWithServiceKey(payload))).statusCode).toBe(200);
    const lowercaseScheme = await t.app.inject({ method: 'GET', url: ENDPOINTS.me, headers: { authorization: `bearer ${accessToken}` } });
    expect(lowercaseScheme.statusCode).toBe(200);
  });

  it('refuses a missing, malformed or non-Bearer Authorization header', async () => {
    const headers: [string, Record<string, string>][] = [
      ['no header', {}],
      ['Basic scheme', { authorization: `Basic ${Buffer.from('alice:secret').toString('base64')}` }],
      ['Token scheme', { authorization: `Token ${accessToken}` }],
      ['scheme only', { authorization: 'Bearer' }],
      ['empty token', { authorization: 'Bearer ' }],
      ['garbage', { authorization: 'Bearer not-a-jwt' }],
      ['two segments', { authorization: `Bearer ${accessToken.split('.').slice(0, 2).join('.')}` }],
      ['bare token', { authorization: accessToken }],
      ['two tokens', { authorization: `Bearer ${accessToken} ${accessToken}` }],
    ];
    for (const [why, header] of headers) {
      expectUnauthorized(await t.app.inject({ method: 'GET', url: ENDPOINTS.me, headers: header }), why);
    }
  });

  it('refuses alg: none', async () => {
    const header = { ...decodeProtectedHeader(accessToken), alg: 'none' };
    const unsigned = `${encodeSegment(header)}.${encodeSegment(payload)}.`;
    expectUnauthorized(await me(t.app, unsigned), 'alg none, empty signature');
    const withOldSignature = `${encodeSegment(header)}.${encodeSegment(payload)}.${accessToken.split('.')[2]}`;
    expectUnauthorized(await me(t.app, withOldSignature), 'alg none, stale signature');
  });

  it('refuses HS256 signed with the public key as a shared secret (key confusion)', async () => {
    const [key] = await storedSigningKeys(t);
    const jwksKey = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json().keys[0];
    const pem = await exportSPKI((await importJWK(key!.publicJwk, key!.alg, { extractable: true })) as CryptoKey);
    const secrets = [JSON.stringify(key!.publicJwk), JSON.stringify(jwksKey), pem, pem.trim()];
    for (const secret of secrets) {
      const forged = await new SignJWT(payload).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: key!.kid }).sign(new TextEncoder().encode(secret));
      expectUnauthorized(await me(t.app, forged), `HS256 with ${secret.slice(0, 20)}`);
    }
  });

  it('refuses a wrong or missing typ, iss or aud', async () => {
    const cases: [string, JWTPayload, Record<string, unknown>][] = [
      ['typ JWT', payload, { typ: 'JWT' }],
      ['typ missing', payload, { typ: undefined }],
      ['typ id_token-like', payload, { typ: 'application/jwt' }],
      ['wrong iss', { ...payload, iss: 'https://evil.example' }, {}],
      ['missing iss', { ...payload, iss: undefined }, {}],
      ['wrong aud', { ...payload, aud: 'another-service' }, {}],
      ['missing aud', { ...payload, aud: undefined }, {}],
      ['missing sid', { ...payload, sid: undefined }, {}],
      ['missing exp', { ...payload, exp: undefined }, {}],
    ];
    for (const [why, claims, header] of cases) {
      expectUnauthorized(await me(t.app, await signWithServiceKey(claims, header)), why);
    }
  });

  it('refuses an expired token', async () => {
    t.clock.advance(899);
    expect((await me(t.app, accessToken)).statusCode).toBe(200);
    t.clock.advance(2);
    expectUnauthorized(await me(t.app, accessToken), 'expired');
    const backdated = await signWithServiceKey({ ...payload, iat: nowSeconds(t) - 2000, exp: nowSeconds(t) - 1 });
    expectUnauthorized(await me(t.app, backdated), 'forged with a past exp');
  });

  it('refuses a token signed by a key the service never published', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const [key] = await storedSigningKeys(t);
    const foreign = (kid: string) => new SignJWT(payload).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid }).sign(privateKey);
    expectUnauthorized(await me(t.app, await foreign('made-up-kid')), 'unknown kid');
    expectUnauthorized(await me(t.app, await foreign(key!.kid)), 'right kid, foreign key');
    const noKid = await new SignJWT(payload).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt' }).sign(key!.privateKey);
    expectUnauthorized(await me(t.app, noKid), 'no kid');
  });

  it('refuses a tampered token', async () => {
    const [header, body, signature] = accessToken.split('.') as [string, string, string];
    const escalated = encodeSegment({ ...payload, username: 'mallory', school_id: 'other-school' });
    expectUnauthorized(await me(t.app, `${header}.${escalated}.${signature}`), 'claims rewritten');
    const middle = Math.floor(body.length / 2);
    const flipped = body.slice(0, middle) + (body[middle] === 'A' ? 'B' : 'A') + body.slice(middle + 1);
    expectUnauthorized(await me(t.app, `${header}.${flipped}.${signature}`), 'one payload character changed');
    const badSignature = signature.slice(0, 10) + (signature[10] === 'A' ? 'B' : 'A') + signature.slice(11);
    expectUnauthorized(await me(t.app, `${header}.${body}.${badSignature}`), 'one signature character changed');
  });

  it('refuses a token whose session ended', async () => {
    await revokeSessionById(t.services, payload.sid as string);
    expectUnauthorized(await me(t.app, accessToken), 'revoked session');
  });

  it('refuses tokens of a disabled admin or a suspended school', async () => {
    const bob = await seedAdmin(t.services, { schoolId: 'Lincoln-High', username: 'bob' });
    const bobToken = (await signIn(t.app, bob)).access_token;
    await setAdminEnabled(t.services, bob, false);
    expectUnauthorized(await me(t.app, bobToken), 'disabled admin');
    expect((await me(t.app, accessToken)).statusCode).toBe(200);
    await suspendSchool(t.services, 'Lincoln-High');
    expectUnauthorized(await me(t.app, accessToken), 'suspended school');
  });

  it('refuses a token whose session was logged out, while other sessions stay valid', async () => {
    const admin = { schoolId: 'Lincoln-High', username: 'Alice', password: PASSWORD };
    const first = await signIn(t.app, admin);
    await logout(t.app, first.refresh_token);
    expectUnauthorized(await me(t.app, first.access_token), 'logged out');
    expect((await me(t.app, accessToken)).statusCode).toBe(200);
  });
});
