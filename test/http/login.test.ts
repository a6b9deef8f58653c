import { hash as argon2Hash } from '@node-rs/argon2';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setAdminEnabled } from '../../src/auth/accounts/admins.js';
import { canonicalKey } from '../../src/auth/identity.js';
import { resumeSchool, suspendSchool } from '../../src/auth/accounts/schools.js';
import { findAdminForLogin } from '../../src/db/queries/admins.js';
import { createTestApp, postJson, seedAdmin, type TestApp } from '../helpers/app.js';
import { BODIES, ENDPOINTS, auditEvents, me, nowSeconds } from '../helpers/contract.js';
import { TEST_DIALECTS } from '../helpers/database.js';

const LOGIN_FIELDS = ['access_token', 'expires_in', 'refresh_expires_in', 'refresh_token', 'school_id', 'token_type', 'username'];

function loginBody(admin: { schoolId: string; username: string; password: string }) {
  return { school_id: admin.schoolId, username: admin.username, password: admin.password };
}

describe.each(TEST_DIALECTS)('POST /admin/auth/login on %s', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({}, dialect);
  });
  afterEach(() => t.close());

  it('answers 200 with the contract fields, the stored identity and no-store headers', async () => {
    const admin = await seedAdmin(t.services, { schoolId: 'Lincoln-High', username: 'Alice' });
    const response = await postJson(t.app, '/admin/auth/login', { school_id: 'lincoln-high', username: 'ALICE', password: admin.password });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers.pragma).toBe('no-cache');
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(LOGIN_FIELDS);
    expect(body).toMatchObject({ expires_in: 900, school_id: 'Lincoln-High', username: 'Alice', token_type: 'bearer', refresh_expires_in: 43200 });
    expect(Number.isInteger(body.expires_in)).toBe(true);
    expect(Number.isInteger(body.refresh_expires_in)).toBe(true);
    expect(typeof body.access_token).toBe('string');
    expect(body.refresh_token).toMatch(/^[A-Za-z0-9_-]{43,}$/);
  });

  it('matches school and username after NFKC and case folding, answering the stored identity', async () => {
    const admin = await seedAdmin(t.services, { schoolId: 'Lincoln-High', username: 'Alice' });
    for (const [schoolId, username] of [
      ['ＬＩＮＣＯＬＮ－ＨＩＧＨ', 'ａｌｉｃｅ'],
      ['LINCOLN-HIGH', 'aLiCe'],
      ['lincoln-high', 'Ａｌｉｃｅ'],
    ] as const) {
      const response = await postJson(t.app, ENDPOINTS.login, { school_id: schoolId, username, password: admin.password });
      expect(response.statusCode, `${schoolId} / ${username}`).toBe(200);
      expect(response.json()).toMatchObject({ school_id: 'Lincoln-High', username: 'Alice' });
    }
  });

  it('normalizes passwords with NFKC, so a fullwidth password matches its ASCII form', async () => {
    const admin = await seedAdmin(t.services, { password: 'ｃｏｒｒｅｃｔ horse ｂａｔｔｅｒｙ' });
    const ascii = await postJson(t.app, ENDPOINTS.login, { ...loginBody(admin), password: 'correct horse battery' });
    expect(ascii.statusCode).toBe(200);
    const caseChanged = await postJson(t.app, ENDPOINTS.login, { ...loginBody(admin), password: 'CORRECT horse battery' });
    expect(caseChanged.statusCode).toBe(401);
  });

  it('issues an RFC 9068 access token that verifies with the published JWKS', async () => {
    const admin = await seedAdmin(t.services);
    const body = (await postJson(t.app, ENDPOINTS.login, loginBody(admin))).json();
    const header = decodeProtectedHeader(body.access_token);
    expect(header).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
    expect(typeof header.kid).toBe('string');
    const jwks = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();
    const { payload } = await jwtVerify(body.access_token, createLocalJWKSet(jwks), {
      issuer: t.config.issuer,
      audience: t.config.audience,
      typ: 'at+jwt',
      currentDate: new Date(t.clock.now()),
    });
    expect(payload).toMatchObject({ school_id: admin.schoolId, username: admin.username, iat: nowSeconds(t), exp: nowSeconds(t) + 900 });
    for (const claim of ['sub', 'sid', 'jti']) expect(typeof payload[claim], claim).toBe('string');
  });

  it('refuses every failure reason with the same bytes and the Bearer challenge', async () => {
    const admin = await seedAdmin(t.services);
    const disabled = await seedAdmin(t.services, { username: 'dora' });
    const suspended = await seedAdmin(t.services, { schoolId: 'closed-school', username: 'sam' });
    await setAdminEnabled(t.services, disabled, false);
    await suspendSchool(t.services, suspended.schoolId);
    const attempts = [
      { school_id: 'no-such-school', username: admin.username, password: admin.password },
      { school_id: admin.schoolId, username: 'nobody', password: admin.password },
      { school_id: admin.schoolId, username: admin.username, password: 'wrong password!!' },
      loginBody(disabled),
      loginBody(suspended),
    ];
    const answers = await Promise.all(attempts.map((body) => postJson(t.app, ENDPOINTS.login, body)));
    const headerNames = (answer: (typeof answers)[number]) =>
      Object.keys(answer.headers).filter((name) => !['date', 'x-request-id'].includes(name)).sort();
    for (const answer of answers) {
      expect(answer.statusCode).toBe(401);
      expect(answer.body).toBe(BODIES.loginRefused);
      expect(answer.headers['www-authenticate']).toBe('Bearer');
      expect(answer.headers['content-type']).toBe(answers[0]!.headers['content-type']);
      expect(headerNames(answer)).toEqual(headerNames(answers[0]!));
    }
  });

  it('lets a disabled admin or a suspended school sign in again once re-enabled', async () => {
    const admin = await seedAdmin(t.services);
    await setAdminEnabled(t.services, admin, false);
    expect((await postJson(t.app, ENDPOINTS.login, loginBody(admin))).statusCode).toBe(401);
    await setAdminEnabled(t.services, admin, true);
    expect((await postJson(t.app, ENDPOINTS.login, loginBody(admin))).statusCode).toBe(200);
    await suspendSchool(t.services, admin.schoolId);
    expect((await postJson(t.app, ENDPOINTS.login, loginBody(admin))).statusCode).toBe(401);
    await resumeSchool(t.services, admin.schoolId);
    expect((await postJson(t.app, ENDPOINTS.login, loginBody(admin))).statusCode).toBe(200);
  });

  it('runs exactly one password verification per attempt, whatever the outcome', async () => {
    const admin = await seedAdmin(t.services);
    const disabled = await seedAdmin(t.services, { username: 'dora' });
    const suspended = await seedAdmin(t.services, { schoolId: 'closed-school', username: 'sam' });
    await setAdminEnabled(t.services, disabled, false);
    await suspendSchool(t.services, suspended.schoolId);
    const verify = vi.spyOn(t.services.hasher, 'verify');
    const verifyDummy = vi.spyOn(t.services.hasher, 'verifyDummy');
    const cases: [string, Record<string, string>, number, boolean][] = [
      ['success', loginBody(admin), 200, false],
      ['unknown school', { ...loginBody(admin), school_id: 'no-such-school' }, 401, true],
      ['unknown user', { ...loginBody(admin), username: 'nobody' }, 401, true],
      ['wrong password', { ...loginBody(admin), password: 'not the password' }, 401, false],
      ['disabled admin', loginBody(disabled), 401, false],
      ['suspended school', loginBody(suspended), 401, false],
    ];
    for (const [reason, body, status, dummy] of cases) {
      verify.mockClear();
      verifyDummy.mockClear();
      expect((await postJson(t.app, ENDPOINTS.login, body)).statusCode, reason).toBe(status);
      // verifyDummy runs its one argon2 verification through verify: the total is always one.
      expect(verify, reason).toHaveBeenCalledTimes(1);
      expect(verifyDummy, reason).toHaveBeenCalledTimes(dummy ? 1 : 0);
    }
  });

  it('rehashes a password on login when the argon2 parameters changed, and only then', async () => {
    const admin = await seedAdmin(t.services);
    const stored = async () => (await findAdminForLogin(t.services.db, canonicalKey(admin.schoolId), canonicalKey(admin.username)))!;
    const current = await stored();
    expect(current.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    await postJson(t.app, ENDPOINTS.login, loginBody(admin));
    expect((await stored()).password_hash).toBe(current.password_hash);

    const old = await argon2Hash(admin.password, { algorithm: 2, memoryCost: 19456, timeCost: 3, parallelism: 1 });
    await t.services.db.updateTable('admins').set({ password_hash: old }).where('id', '=', current.id).execute();
    expect((await postJson(t.app, ENDPOINTS.login, { ...loginBody(admin), password: 'not the password' })).statusCode).toBe(401);
    expect((await stored()).password_hash).toBe(old);

    expect((await postJson(t.app, ENDPOINTS.login, loginBody(admin))).statusCode).toBe(200);
    const upgraded = (await stored()).password_hash;
    expect(upgraded).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect((await postJson(t.app, ENDPOINTS.login, loginBody(admin))).statusCode).toBe(200);
    expect((await postJson(t.app, ENDPOINTS.login, { ...loginBody(admin), password: 'not the password' })).statusCode).toBe(401);
  });

  it('keeps the same username in two schools apart', async () => {
    const north = await seedAdmin(t.services, { schoolId: 'north', username: 'alice', password: 'north password 1' });
    const south = await seedAdmin(t.services, { schoolId: 'south', username: 'alice', password: 'south password 2' });
    const northLogin = await postJson(t.app, ENDPOINTS.login, loginBody(north));
    const southLogin = await postJson(t.app, ENDPOINTS.login, loginBody(south));
    expect(northLogin.statusCode).toBe(200);
    expect(southLogin.statusCode).toBe(200);
    expect((await postJson(t.app, ENDPOINTS.login, { ...loginBody(north), password: south.password })).body).toBe(BODIES.loginRefused);
    expect((await postJson(t.app, ENDPOINTS.login, { ...loginBody(south), password: north.password })).body).toBe(BODIES.loginRefused);
    const northClaims = decodeJwt(northLogin.json().access_token);
    const southClaims = decodeJwt(southLogin.json().access_token);
    expect(northClaims.school_id).toBe('north');
    expect(southClaims.school_id).toBe('south');
    expect(northClaims.sub).not.toBe(southClaims.sub);
    expect((await me(t.app, southLogin.json().access_token)).json()).toMatchObject({ school_id: 'south', sub: southClaims.sub });
  });

  it('records successes and failures in the audit trail with reason, IP and user agent', async () => {
    const admin = await seedAdmin(t.services, { schoolId: 'Lincoln-High' });
    const disabled = await seedAdmin(t.services, { schoolId: 'Lincoln-High', username: 'dora' });
    await setAdminEnabled(t.services, disabled, false);
    const send = (body: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: ENDPOINTS.login,
        payload: body,
        remoteAddress: '203.0.113.7',
        headers: { 'user-agent': 'contract-test/1.0', 'x-forwarded-for': '198.51.100.9' },
      });
    const ok = await send(loginBody(admin));
    expect(ok.statusCode).toBe(200);
    await send({ ...loginBody(admin), password: 'not the password' });
    await send({ ...loginBody(admin), username: 'nobody' });
    await send({ ...loginBody(admin), school_id: 'elsewhere' });
    await send(loginBody(disabled));

    const [success] = await auditEvents(t, 'login.success');
    expect(success).toMatchObject({
      school_id: canonicalKey('Lincoln-High'),
      username: admin.username,
      session_id: decodeJwt(ok.json().access_token).sid,
      ip: '203.0.113.7',
      user_agent: 'contract-test/1.0',
    });
    expect(success!.at).toBe(t.clock.now());
    const failures = await auditEvents(t, 'login.failure');
    expect(failures.map((event) => [event.username, event.detail])).toEqual([
      [admin.username, 'wrong_password'],
      ['nobody', 'unknown_account'],
      [admin.username, 'unknown_account'],
      ['dora', 'admin_disabled'],
    ]);
    for (const failure of failures) expect(failure).toMatchObject({ ip: '203.0.113.7', user_agent: 'contract-test/1.0' });
  });

  // U+0000 is a valid JSON string character, so validation passes, but PostgreSQL text cannot
  // hold it: the login must still be the one 401 of a refused login, never a 500.
  it('refuses identifiers containing U+0000 with the same 401, never a 500', async () => {
    const admin = await seedAdmin(t.services);
    for (const body of [
      { ...loginBody(admin), school_id: `${admin.schoolId}\u0000` },
      { ...loginBody(admin), username: `\u0000${admin.username}` },
      { ...loginBody(admin), password: `${admin.password}\u0000` },
    ]) {
      const response = await postJson(t.app, ENDPOINTS.login, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(401);
      expect(response.body).toBe(BODIES.loginRefused);
    }
  });

  it('records the school-suspended reason', async () => {
    const admin = await seedAdmin(t.services);
    await suspendSchool(t.services, admin.schoolId);
    await postJson(t.app, ENDPOINTS.login, loginBody(admin));
    const failures = await auditEvents(t, 'login.failure');
    expect(failures.map((event) => event.detail)).toEqual(['school_suspended']);
  });
});

describe.each(TEST_DIALECTS)('POST /admin/auth/login behind a trusted proxy on %s', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ TRUST_PROXY: '10.0.0.1' }, dialect);
  });
  afterEach(() => t.close());

  it('takes the client IP from X-Forwarded-For only when the peer is a trusted proxy', async () => {
    const admin = await seedAdmin(t.services);
    const headers = { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.9' };
    const payload = JSON.stringify(loginBody(admin));
    await t.app.inject({ method: 'POST', url: ENDPOINTS.login, payload, headers, remoteAddress: '10.0.0.1' });
    await t.app.inject({ method: 'POST', url: ENDPOINTS.login, payload, headers, remoteAddress: '203.0.113.7' });
    expect((await auditEvents(t, 'login.success')).map((event) => event.ip)).toEqual(['198.51.100.9', '203.0.113.7']);
  });
});
