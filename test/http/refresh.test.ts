import { decodeJwt } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { changePassword, setAdminEnabled } from '../../src/auth/accounts/admins.js';
import { resumeSchool, suspendSchool } from '../../src/auth/accounts/schools.js';
import { revokeSessionById, revokeSessionsOfAdmin } from '../../src/auth/accounts/session-control.js';
import { createTestApp, seedAdmin, signIn, type TestApp } from '../helpers/app.js';
import { BODIES, INVALID_TOKEN_CHALLENGE, logout, me, nowSeconds, refresh } from '../helpers/contract.js';
import { TEST_DIALECTS } from '../helpers/database.js';
import type { LightMyRequestResponse } from 'fastify';

function expectRefused(response: LightMyRequestResponse, why = '') {
  expect(response.statusCode, why).toBe(401);
  expect(response.body, why).toBe(BODIES.invalidRefreshToken);
  expect(response.headers['www-authenticate'], why).toBe(INVALID_TOKEN_CHALLENGE);
}

describe.each(TEST_DIALECTS)('POST /auth/refresh, reusable mode (default) on %s', (dialect) => {
  let t: TestApp;
  let admin: Awaited<ReturnType<typeof seedAdmin>>;
  beforeEach(async () => {
    t = await createTestApp({}, dialect);
    admin = await seedAdmin(t.services);
  });
  afterEach(() => t.close());

  it('answers exactly access_token, expires_in and token_type, with no-store headers', async () => {
    const session = await signIn(t.app, admin);
    t.clock.advance(120);
    const response = await refresh(t.app, session.refresh_token);
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers.pragma).toBe('no-cache');
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
    expect(body.expires_in).toBe(900);
    expect(Number.isInteger(body.expires_in)).toBe(true);
    expect(body.token_type).toBe('bearer');
    const claims = decodeJwt(body.access_token);
    const original = decodeJwt(session.access_token);
    expect(claims).toMatchObject({ sub: original.sub, sid: original.sid, school_id: admin.schoolId, username: admin.username });
    expect(claims.iat).toBe(nowSeconds(t));
    expect(claims.jti).not.toBe(original.jti);
    expect((await me(t.app, body.access_token)).statusCode).toBe(200);
  });

  it('accepts the same refresh token many times', async () => {
    const session = await signIn(t.app, admin);
    const tokens = new Set<string>();
    for (let i = 0; i < 5; i++) {
      t.clock.advance(30);
      const response = await refresh(t.app, session.refresh_token);
      expect(response.statusCode).toBe(200);
      tokens.add(response.json().access_token);
    }
    expect(tokens.size).toBe(5);
  });

  it('ends a session left unused longer than the idle timeout', async () => {
    const session = await signIn(t.app, admin);
    t.clock.advance(3601);
    expectRefused(await refresh(t.app, session.refresh_token));
    // Refused once, refused for good: the refusal itself does not revive it.
    expectRefused(await refresh(t.app, session.refresh_token));
  });

  it('keeps a session used every 50 minutes alive for hours, then ends it when idle', async () => {
    const session = await signIn(t.app, admin);
    for (let i = 1; i <= 8; i++) {
      t.clock.advance(3000);
      expect((await refresh(t.app, session.refresh_token)).statusCode, `after ${i * 50} min`).toBe(200);
    }
    t.clock.advance(3599);
    expect((await refresh(t.app, session.refresh_token)).statusCode).toBe(200);
    t.clock.advance(3601);
    expectRefused(await refresh(t.app, session.refresh_token));
  });

  it('ends a session at its absolute lifetime, however often it is used', async () => {
    const session = await signIn(t.app, admin);
    for (let elapsed = 1800; elapsed < 43200; elapsed += 1800) {
      t.clock.advance(1800);
      expect((await refresh(t.app, session.refresh_token)).statusCode, `at ${elapsed} s`).toBe(200);
    }
    t.clock.advance(1799);
    const last = await refresh(t.app, session.refresh_token);
    expect(last.statusCode, 'at 43199 s').toBe(200);
    t.clock.advance(1);
    expectRefused(await refresh(t.app, session.refresh_token), 'at 43200 s');
    expect((await me(t.app, last.json().access_token)).statusCode).toBe(401);
  });

  it('refuses unknown and garbage tokens', async () => {
    const session = await signIn(t.app, admin);
    const flipped = (session.refresh_token[0] === 'A' ? 'B' : 'A') + session.refresh_token.slice(1);
    for (const token of ['garbage', 'A'.repeat(43), flipped, session.access_token.slice(0, 512), ` ${session.refresh_token}`, `${session.refresh_token}=`, '']) {
      expectRefused(await refresh(t.app, token), token);
    }
    expect((await refresh(t.app, session.refresh_token)).statusCode).toBe(200);
  });

  it('refuses a token after logout, and only that session ends', async () => {
    const first = await signIn(t.app, admin);
    const second = await signIn(t.app, admin);
    expect((await logout(t.app, first.refresh_token)).statusCode).toBe(204);
    expectRefused(await refresh(t.app, first.refresh_token));
    expect((await refresh(t.app, second.refresh_token)).statusCode).toBe(200);
  });

  it('refuses tokens of an admin whose password changed', async () => {
    const session = await signIn(t.app, admin);
    await changePassword(t.services, admin, 'a brand new passphrase');
    expectRefused(await refresh(t.app, session.refresh_token));
    expect((await signIn(t.app, { ...admin, password: 'a brand new passphrase' })).refresh_token).toBeTruthy();
  });

  it('refuses tokens of a disabled admin, even after re-enabling', async () => {
    const session = await signIn(t.app, admin);
    await setAdminEnabled(t.services, admin, false);
    expectRefused(await refresh(t.app, session.refresh_token));
    await setAdminEnabled(t.services, admin, true);
    expectRefused(await refresh(t.app, session.refresh_token));
  });

  it('refuses tokens of a suspended school, even after it resumes', async () => {
    const session = await signIn(t.app, admin);
    const other = await seedAdmin(t.services, { schoolId: 'other-school', username: 'bob' });
    const otherSession = await signIn(t.app, other);
    await suspendSchool(t.services, admin.schoolId);
    expectRefused(await refresh(t.app, session.refresh_token));
    expect((await refresh(t.app, otherSession.refresh_token)).statusCode).toBe(200);
    await resumeSchool(t.services, admin.schoolId);
    expectRefused(await refresh(t.app, session.refresh_token));
  });

  it('refuses tokens revoked from the CLI, one session or all of an admin', async () => {
    const first = await signIn(t.app, admin);
    const second = await signIn(t.app, admin);
    const third = await signIn(t.app, admin);
    const bob = await signIn(t.app, await seedAdmin(t.services, { username: 'bob' }));
    expect(await revokeSessionById(t.services, decodeJwt(first.access_token).sid as string)).toBe(true);
    expectRefused(await refresh(t.app, first.refresh_token));
    expect((await refresh(t.app, second.refresh_token)).statusCode).toBe(200);
    await revokeSessionsOfAdmin(t.services, admin);
    expectRefused(await refresh(t.app, second.refresh_token));
    expectRefused(await refresh(t.app, third.refresh_token));
    expect((await refresh(t.app, bob.refresh_token)).statusCode).toBe(200);
  });
});
