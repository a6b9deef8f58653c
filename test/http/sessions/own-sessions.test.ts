/** Self-service: an admin lists and ends their own sessions with their bearer access token. */
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { useTestApps, seedAdmin, signIn, type TestApp } from '../../helpers/app.js';
import { BODIES, auditEvents, me, refresh } from '../../helpers/contract.js';
import { TEST_DIALECTS } from '../../helpers/database.js';

const sidOf = (token: string) => decodeJwt(token).sid as string;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

function listSessions(t: TestApp, token: string) {
  return t.app.inject({ method: 'GET', url: '/admin/auth/sessions', headers: bearer(token) });
}

describe.each(TEST_DIALECTS)('self-service sessions on %s', (dialect) => {
  const open = useTestApps(dialect);

  async function twoSessions() {
    const t = await open();
    const alice = await seedAdmin(t.services);
    const laptop = await signIn(t.app, alice);
    t.clock.advance(5);
    const phone = await t.app.inject({
      method: 'POST',
      url: '/admin/auth/login',
      headers: { 'content-type': 'application/json', 'user-agent': 'PhoneBrowser/1.0' },
      payload: JSON.stringify({ school_id: alice.schoolId, username: alice.username, password: alice.password }),
    });
    return { t, alice, laptop, phone: phone.json<{ access_token: string; refresh_token: string }>() };
  }

  it('lists the live sessions newest first, marks the current one, and leaves ended ones out', async () => {
    const { t, alice, laptop, phone } = await twoSessions();
    const ended = await signIn(t.app, alice);
    expect((await t.app.inject({ method: 'POST', url: '/auth/logout', payload: { refresh_token: ended.refresh_token } })).statusCode).toBe(204);
    const response = await listSessions(t, laptop.access_token);
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.json()).toEqual({
      sessions: [
        { session_id: sidOf(phone.access_token), created_at: '2026-01-05T08:00:05Z', last_used_at: '2026-01-05T08:00:05Z', ip: '127.0.0.1', user_agent: 'PhoneBrowser/1.0', acr: 'aal1', amr: ['pwd'], current: false },
        { session_id: sidOf(laptop.access_token), created_at: '2026-01-05T08:00:00Z', last_used_at: '2026-01-05T08:00:00Z', ip: '127.0.0.1', user_agent: 'lightMyRequest', acr: 'aal1', amr: ['pwd'], current: true },
      ],
    });
  });

  it('answers 401 without a valid bearer token, on every self-service route', async () => {
    const { t } = await twoSessions();
    for (const [method, url] of [['GET', '/admin/auth/sessions'], ['DELETE', '/admin/auth/sessions/x'], ['POST', '/admin/auth/sessions/revoke-others']] as const) {
      const response = await t.app.inject({ method, url, headers: bearer('not-a-token') });
      expect(response.statusCode, url).toBe(401);
      expect(response.body, url).toBe(BODIES.invalidAccessToken);
      expect(response.headers['www-authenticate'], url).toBe('Bearer');
    }
  });

  it('ends one own session: its refresh and access tokens stop working, the other session keeps going, the audit trail names who did it', async () => {
    const { t, laptop, phone } = await twoSessions();
    const phoneSid = sidOf(phone.access_token);
    const response = await t.app.inject({ method: 'DELETE', url: `/admin/auth/sessions/${phoneSid}`, headers: bearer(laptop.access_token) });
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    expect((await refresh(t.app, phone.refresh_token)).statusCode).toBe(401);
    expect((await me(t.app, phone.access_token)).statusCode).toBe(401);
    expect((await me(t.app, laptop.access_token)).statusCode).toBe(200);
    expect((await listSessions(t, laptop.access_token)).json().sessions.map((s: { session_id: string }) => s.session_id)).toEqual([sidOf(laptop.access_token)]);
    const [event] = await auditEvents(t, 'session.revoked');
    expect(event).toMatchObject({ username: 'alice', session_id: sidOf(laptop.access_token), detail: `self-service: session ${phoneSid} ended` });
    const again = await t.app.inject({ method: 'DELETE', url: `/admin/auth/sessions/${phoneSid}`, headers: bearer(laptop.access_token) });
    expect(again.statusCode).toBe(404);
  });

  it("answers 404 for another admin's session and an unknown one, and ends neither", async () => {
    const { t, laptop } = await twoSessions();
    const bob = await signIn(t.app, await seedAdmin(t.services, { username: 'bob' }));
    for (const id of [sidOf(bob.access_token), 'no-such-session']) {
      const response = await t.app.inject({ method: 'DELETE', url: `/admin/auth/sessions/${id}`, headers: bearer(laptop.access_token) });
      expect(response.statusCode, id).toBe(404);
      expect(response.body, id).toBe(BODIES.notFound);
    }
    expect((await refresh(t.app, bob.refresh_token)).statusCode).toBe(200);
    expect(await auditEvents(t, 'session.revoked')).toEqual([]);
  });

  it('revoke-others ends every other session and keeps the current one working, refresh included', async () => {
    const { t, alice, laptop, phone } = await twoSessions();
    const tablet = await signIn(t.app, alice);
    const response = await t.app.inject({ method: 'POST', url: '/admin/auth/sessions/revoke-others', headers: bearer(tablet.access_token) });
    expect(response.statusCode).toBe(204);
    for (const other of [laptop, phone]) {
      expect((await refresh(t.app, other.refresh_token)).statusCode).toBe(401);
      expect((await me(t.app, other.access_token)).statusCode).toBe(401);
    }
    expect((await me(t.app, tablet.access_token)).statusCode).toBe(200);
    expect((await refresh(t.app, tablet.refresh_token)).statusCode).toBe(200);
    expect((await listSessions(t, tablet.access_token)).json().sessions).toHaveLength(1);
    const [event] = await auditEvents(t, 'session.revoked');
    expect(event).toMatchObject({ session_id: sidOf(tablet.access_token), detail: 'self-service: 2 other sessions ended' });
    // A later login of the same admin works: the epoch moved on, sign-in did not stop.
    expect((await signIn(t.app, alice)).access_token).toBeTruthy();
  });

  it('two concurrent revoke-others from two sessions leave exactly one of them alive, decided by the database', async () => {
    const { t, laptop, phone } = await twoSessions();
    const answers = await Promise.all(
      [laptop, phone].map((s) => t.app.inject({ method: 'POST', url: '/admin/auth/sessions/revoke-others', headers: bearer(s.access_token) })),
    );
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([204, 401]);
    const alive = await Promise.all([laptop, phone].map(async (s) => (await refresh(t.app, s.refresh_token)).statusCode));
    expect(alive.sort()).toEqual([200, 401]);
    const winner = answers[0]?.statusCode === 204 ? laptop : phone;
    expect((await refresh(t.app, winner.refresh_token)).statusCode).toBe(200);
  });
});
