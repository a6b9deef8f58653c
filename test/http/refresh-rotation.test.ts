import type { LightMyRequestResponse } from 'fastify';
import { decodeJwt } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { changePassword, setAdminEnabled } from '../../src/auth/accounts/admins.js';
import { suspendSchool } from '../../src/auth/accounts/schools.js';
import { createTestApp, seedAdmin, signIn, type TestApp } from '../helpers/app.js';
import { BODIES, INVALID_TOKEN_CHALLENGE, auditEvents, logout, me, refresh } from '../helpers/contract.js';
import { TEST_DIALECTS } from '../helpers/database.js';

function expectRefused(response: LightMyRequestResponse, why = '') {
  expect(response.statusCode, why).toBe(401);
  expect(response.body, why).toBe(BODIES.invalidRefreshToken);
  expect(response.headers['www-authenticate'], why).toBe(INVALID_TOKEN_CHALLENGE);
}

async function rotate(t: TestApp, token: string): Promise<{ access_token: string; refresh_token: string; refresh_expires_in: number }> {
  const response = await refresh(t.app, token);
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

describe.each(TEST_DIALECTS)('POST /auth/refresh with REFRESH_TOKEN_ROTATION=on on %s', (dialect) => {
  let t: TestApp;
  let admin: Awaited<ReturnType<typeof seedAdmin>>;
  beforeEach(async () => {
    t = await createTestApp({ REFRESH_TOKEN_ROTATION: 'on' }, dialect);
    admin = await seedAdmin(t.services);
  });
  afterEach(() => t.close());

  it('returns a new refresh token with a decreasing refresh_expires_in', async () => {
    const session = await signIn(t.app, admin);
    expect(session.refresh_expires_in).toBe(43200);
    t.clock.advance(100);
    const response = await refresh(t.app, session.refresh_token);
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers.pragma).toBe('no-cache');
    const first = response.json();
    expect(Object.keys(first).sort()).toEqual(['access_token', 'expires_in', 'refresh_expires_in', 'refresh_token', 'token_type']);
    expect(first).toMatchObject({ expires_in: 900, token_type: 'bearer', refresh_expires_in: 43100 });
    expect(first.refresh_token).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(first.refresh_token).not.toBe(session.refresh_token);
    expect(decodeJwt(first.access_token).sid).toBe(decodeJwt(session.access_token).sid);

    t.clock.advance(200);
    const second = await rotate(t, first.refresh_token);
    expect(second.refresh_expires_in).toBe(42900);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await me(t.app, second.access_token)).statusCode).toBe(200);
  });

  it('answers the same successor when the previous token comes back within the grace window', async () => {
    const session = await signIn(t.app, admin);
    const successor = await rotate(t, session.refresh_token);
    t.clock.advance(5);
    const replay = await rotate(t, session.refresh_token);
    expect(replay.refresh_token).toBe(successor.refresh_token);
    t.clock.advance(5);
    expect((await rotate(t, session.refresh_token)).refresh_token).toBe(successor.refresh_token);
    // The grace replay did not revoke anything: the successor still works.
    const next = await rotate(t, successor.refresh_token);
    expect(next.refresh_token).not.toBe(successor.refresh_token);
    expect(await auditEvents(t, 'refresh.reuse')).toEqual([]);
  });

  it('revokes the whole session when a replaced token comes back after the grace window', async () => {
    const session = await signIn(t.app, admin);
    const successor = await rotate(t, session.refresh_token);
    t.clock.advance(11);
    const reuse = await t.app.inject({
      method: 'POST',
      url: '/auth/refresh',
      payload: { refresh_token: session.refresh_token },
      remoteAddress: '198.51.100.66',
      headers: { 'user-agent': 'thief/1.0' },
    });
    expectRefused(reuse, 'reused token');
    const events = await auditEvents(t, 'refresh.reuse');
    expect(events).toHaveLength(1);
    expectRefused(await refresh(t.app, successor.refresh_token), 'successor after reuse');
    expectRefused(await refresh(t.app, session.refresh_token), 'reused token again');
    expect((await me(t.app, successor.access_token)).statusCode).toBe(401);
    expect(events[0]).toMatchObject({
      session_id: decodeJwt(session.access_token).sid,
      username: admin.username,
      ip: '198.51.100.66',
      user_agent: 'thief/1.0',
    });
  });

  it('does not hand out a successor for a session ended within the grace window', async () => {
    const session = await signIn(t.app, admin);
    const successor = await rotate(t, session.refresh_token);
    expect((await logout(t.app, successor.refresh_token)).statusCode).toBe(204);
    t.clock.advance(2);
    expectRefused(await refresh(t.app, session.refresh_token));
    expectRefused(await refresh(t.app, successor.refresh_token));
  });

  it('gives 20 parallel refreshes of one token the same single successor', async () => {
    const session = await signIn(t.app, admin);
    const answers = await Promise.all(Array.from({ length: 20 }, () => refresh(t.app, session.refresh_token)));
    expect(answers.filter((answer) => answer.statusCode >= 500)).toEqual([]);
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(20).fill(200));
    const successors = new Set(answers.map((answer) => answer.json().refresh_token as string));
    expect(successors.size).toBe(1);
    const [successor] = successors;
    expect(successor).not.toBe(session.refresh_token);
    expect((await rotate(t, successor!)).refresh_token).not.toBe(successor);
    expect(await auditEvents(t, 'refresh.reuse')).toEqual([]);
  });

  it('writes the idle clock at most once a minute, as in reusable mode', async () => {
    const session = await signIn(t.app, admin);
    const lastUsed = async () =>
      (await t.services.db.selectFrom('sessions').select('last_used_at').where('id', '=', String(decodeJwt(session.access_token).sid)).executeTakeFirstOrThrow())
        .last_used_at;
    const signedInAt = await lastUsed();
    t.clock.advance(30);
    let token = (await rotate(t, session.refresh_token)).refresh_token;
    expect(await lastUsed()).toBe(signedInAt);
    t.clock.advance(30);
    token = (await rotate(t, token)).refresh_token;
    expect(await lastUsed()).toBe(signedInAt + 60);
    t.clock.advance(59);
    token = (await rotate(t, token)).refresh_token;
    expect(await lastUsed()).toBe(signedInAt + 60);
    // Idle for exactly the timeout since the last written use: still alive; a second more: ended.
    t.clock.advance(3600 - 59);
    token = (await rotate(t, token)).refresh_token;
    t.clock.advance(3601);
    expectRefused(await refresh(t.app, token));
  });

  it('consumes a token exactly when it answers its successor, at every edge of a session', async () => {
    const tokensOf = async (accessToken: string) => {
      const rows = await t.services.db
        .selectFrom('refresh_tokens')
        .select('consumed_at')
        .where('session_id', '=', String(decodeJwt(accessToken).sid))
        .execute();
      return { rows: rows.length, consumed: rows.filter((row) => row.consumed_at !== null).length };
    };
    /** Refreshes once after `advance` seconds (and `act`): 200 must go with one consumption, 401 with none. */
    const presentOnce = async (advance: number, act: (refreshToken: string) => Promise<unknown> = () => Promise.resolve()) => {
      const session = await signIn(t.app, admin);
      t.clock.advance(advance);
      await act(session.refresh_token);
      const response = await refresh(t.app, session.refresh_token);
      const tokens = await tokensOf(session.access_token);
      return { status: response.statusCode, tokens };
    };
    const served = { status: 200, tokens: { rows: 2, consumed: 1 } };
    const refused = { status: 401, tokens: { rows: 1, consumed: 0 } };
    expect(await presentOnce(3600), 'idle exactly the timeout').toEqual(served);
    expect(await presentOnce(3601), 'idle a second longer').toEqual(refused);
    expect(await presentOnce(10, (token) => logout(t.app, token)), 'logged out').toEqual({ status: 401, tokens: { rows: 1, consumed: 0 } });
    expect(await presentOnce(10, () => changePassword(t.services, admin, 'another-passw0rd!')), 'password changed').toEqual(refused);
    admin = { ...admin, password: 'another-passw0rd!' };
    expect(await presentOnce(10, () => setAdminEnabled(t.services, admin, false).then(() => setAdminEnabled(t.services, admin, true))), 'disabled, enabled').toEqual(
      refused,
    );
    expect(await presentOnce(10, () => suspendSchool(t.services, admin.schoolId)), 'school suspended').toEqual(refused);
  });

  it('does not consume the token at the absolute lifetime, and does a second before', async () => {
    let session = await signIn(t.app, admin);
    for (let elapsed = 3000; elapsed <= 42000; elapsed += 3000) {
      t.clock.advance(3000);
      session = { ...session, ...(await rotate(t, session.refresh_token)) };
    }
    t.clock.advance(43200 - 42000 - 1);
    const last = await rotate(t, session.refresh_token);
    t.clock.advance(1);
    const sid = String(decodeJwt(session.access_token).sid);
    const before = await t.services.db.selectFrom('refresh_tokens').select(['consumed_at']).where('session_id', '=', sid).execute();
    expectRefused(await refresh(t.app, last.refresh_token));
    const after = await t.services.db.selectFrom('refresh_tokens').select(['consumed_at']).where('session_id', '=', sid).execute();
    expect(after).toEqual(before);
    expect(after.filter((row) => row.consumed_at === null)).toHaveLength(1);
  });

  it('still ends sessions on idle timeout and absolute lifetime', async () => {
    const idle = await signIn(t.app, admin);
    t.clock.advance(3601);
    expectRefused(await refresh(t.app, idle.refresh_token));

    let token = (await signIn(t.app, admin)).refresh_token;
    for (let elapsed = 3000; elapsed < 43200; elapsed += 3000) {
      t.clock.advance(3000);
      const rotated = await rotate(t, token);
      expect(rotated.refresh_expires_in).toBe(43200 - elapsed);
      token = rotated.refresh_token;
    }
    t.clock.advance(43200 - 42000);
    expectRefused(await refresh(t.app, token));
  });
});
