/**
 * De-provisioning by the directory ends every session in the same request: `active` false (PATCH
 * as Entra sends it, or PUT) and DELETE each leave no refresh token, access token or password login
 * working, put every ended session in the revocation feed and name the SCIM token in the audit
 * trail. A SCIM client never sets a password.
 */
import { decodeJwt } from 'jose';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { postJson, seedAdmin, signIn, useTestApps, PASSWORD, type TestApp } from '../../helpers/app.js';
import { sealAll, verdict } from '../../helpers/audit.js';
import { BODIES, me, refresh } from '../../helpers/contract.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { ERROR_SCHEMA, PATCH_SCHEMA, USER_SCHEMA, entraUser, scimSchool } from '../../helpers/scim.js';

const DIRECTORY_AGENT = 'Azure Active Directory SCIM Client/1.0 (test)';
const DIRECTORY_IP = '203.0.113.7';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Session = Awaited<ReturnType<typeof signIn>>;

/** A request of the directory: its token, its user agent, its address. */
function directory(t: TestApp, token: string) {
  return (method: Method, url: string, body?: unknown): Promise<LightMyRequestResponse> =>
    t.app.inject({
      method,
      url: `/scim/v2${url}`,
      remoteAddress: DIRECTORY_IP,
      headers: { authorization: `Bearer ${token}`, 'user-agent': DIRECTORY_AGENT, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
}

const login = (t: TestApp, username: string, password: string) => postJson(t.app, '/admin/auth/login', { school_id: 'lincoln-high', username, password });

async function feedSince(t: TestApp, since?: string) {
  const response = await t.app.inject({ method: 'GET', url: since === undefined ? '/auth/revocations' : `/auth/revocations?since=${encodeURIComponent(since)}` });
  expect(response.statusCode).toBe(200);
  return response.json<{ sids: string[]; cursor: string; has_more: boolean }>();
}

const sidOf = (session: Session) => decodeJwt(session.access_token).sid as string;

describe.each(TEST_DIALECTS)('SCIM de-provisioning ends every session at once (%s)', (dialect) => {
  const open = useTestApps(dialect);

  /** alice, with a password, signed in twice; the school's SCIM token; where the revocation feed stands. */
  async function aliceSignedInTwice() {
    const t = await open();
    const alice = await seedAdmin(t.services);
    const scim = await scimSchool(t.services);
    const { id } = await t.services.db.selectFrom('admins').select('id').where('username', '=', 'alice').executeTakeFirstOrThrow();
    const sessions = [await signIn(t.app, alice), await signIn(t.app, alice)];
    for (const session of sessions) expect((await refresh(t.app, session.refresh_token)).statusCode).toBe(200);
    const { cursor } = await feedSince(t);
    return { t, alice, id, sessions, cursor, send: directory(t, scim.token), tokenId: scim.tokenId };
  }

  /**
   * Right after the one request, with no time passing: nothing of alice's works any more, and the
   * trail says who did it, from where.
   */
  async function expectAllEnded(setup: Awaited<ReturnType<typeof aliceSignedInTwice>>, type: 'admin.disabled' | 'admin.deleted') {
    const { t, id, sessions, cursor, tokenId } = setup;
    for (const session of sessions) {
      const refused = await refresh(t.app, session.refresh_token);
      expect(refused.statusCode).toBe(401);
      expect(refused.body).toBe(BODIES.invalidRefreshToken);
      expect((await me(t.app, session.access_token)).statusCode).toBe(401);
    }
    const refusedLogin = await login(t, 'alice', PASSWORD);
    expect(refusedLogin.statusCode).toBe(401);
    expect(refusedLogin.body).toBe(BODIES.loginRefused);
    expect((await feedSince(t, cursor)).sids.sort()).toEqual(sessions.map(sidOf).sort());
    const events = await t.services.db.selectFrom('events').selectAll().where('type', '=', type).execute();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ admin_id: id, school_id: 'lincoln-high', ip: DIRECTORY_IP, user_agent: DIRECTORY_AGENT, detail: `by SCIM token ${tokenId}; 2 sessions ended` });
    const live = await t.services.db.selectFrom('sessions').select('id').where('admin_id', '=', id).where('revoked_at', 'is', null).execute();
    expect(live).toEqual([]);
  }

  it('PATCH active "False" (as Entra sends it)', async () => {
    const setup = await aliceSignedInTwice();
    const response = await setup.send('PATCH', `/Users/${setup.id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ id: setup.id, userName: 'alice', active: false });
    await expectAllEnded(setup, 'admin.disabled');
  });

  it('PUT with active false', async () => {
    const setup = await aliceSignedInTwice();
    const response = await setup.send('PUT', `/Users/${setup.id}`, { schemas: [USER_SCHEMA], userName: 'alice', active: false });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ id: setup.id, active: false });
    await expectAllEnded(setup, 'admin.disabled');
  });

  it('DELETE: gone from the list, its username free for a new admin, the audit chain still verifies', async () => {
    const setup = await aliceSignedInTwice();
    const { t, id, send } = setup;
    const { db } = t.services;
    await sealAll(t.services);
    const eventsBefore = await db.selectFrom('events').select(['id', 'hash']).where('admin_id', '=', id).orderBy('id').execute();
    expect(eventsBefore.length).toBeGreaterThanOrEqual(2);

    const response = await send('DELETE', `/Users/${id}`);
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    await expectAllEnded(setup, 'admin.deleted');

    expect((await send('GET', '/Users')).json()).toMatchObject({ totalResults: 0, Resources: [] });
    expect((await send('GET', `/Users?filter=${encodeURIComponent('userName eq "alice"')}`)).json()).toMatchObject({ totalResults: 0 });
    expect((await send('GET', `/Users/${id}`)).statusCode).toBe(404);
    expect((await send('DELETE', `/Users/${id}`)).statusCode).toBe(404);
    // The events about alice stay, sealed as they were.
    const eventsAfter = await db.selectFrom('events').select(['id', 'hash']).where('admin_id', '=', id).orderBy('id').execute();
    expect(eventsAfter.slice(0, eventsBefore.length)).toEqual(eventsBefore);

    const again = await send('POST', '/Users', entraUser('alice', { externalId: 'alice-2', emails: [{ value: 'alice@district.example', type: 'work' }] }));
    expect(again.statusCode, again.body).toBe(201);
    const newcomer = again.json<{ id: string; userName: string; active: boolean }>();
    expect(newcomer).toMatchObject({ userName: 'alice', active: true });
    expect(newcomer.id).not.toBe(id);
    expect((await send('GET', '/Users')).json()).toMatchObject({ totalResults: 1, Resources: [{ id: newcomer.id }] });
    // The new alice has no password: the old one opens nothing.
    expect((await login(t, 'alice', PASSWORD)).body).toBe(BODIES.loginRefused);

    await sealAll(t.services);
    expect(await verdict(db)).toBe('ok');
    const unsealed = await db.selectFrom('events').select('id').where('seq', 'is', null).execute();
    expect(unsealed).toEqual([]);
  });

  it('reactivation (active true) lets the admin sign in again with the password; the ended sessions stay ended', async () => {
    const setup = await aliceSignedInTwice();
    const { t, id, send, alice, sessions, tokenId } = setup;
    const patch = (value: unknown) => send('PATCH', `/Users/${id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', path: 'active', value }] });
    expect((await patch('False')).json()).toMatchObject({ active: false });
    expect((await login(t, 'alice', PASSWORD)).statusCode).toBe(401);

    const enabled = await patch(true);
    expect(enabled.statusCode, enabled.body).toBe(200);
    expect(enabled.json()).toMatchObject({ active: true });
    const fresh = await signIn(t.app, alice);
    expect((await me(t.app, fresh.access_token)).statusCode).toBe(200);
    expect((await refresh(t.app, fresh.refresh_token)).statusCode).toBe(200);
    for (const session of sessions) expect((await refresh(t.app, session.refresh_token)).statusCode).toBe(401);
    const events = await t.services.db.selectFrom('events').select(['type', 'detail', 'user_agent']).where('admin_id', '=', id).where('type', 'in', ['admin.disabled', 'admin.enabled']).orderBy('id').execute();
    expect(events).toEqual([
      { type: 'admin.disabled', detail: `by SCIM token ${tokenId}; 2 sessions ended`, user_agent: DIRECTORY_AGENT },
      { type: 'admin.enabled', detail: `by SCIM token ${tokenId}`, user_agent: DIRECTORY_AGENT },
    ]);
  });

  it('a SCIM-created admin has no password: any password gets the wrong password\'s 401; a client cannot set one', async () => {
    const t = await open();
    await seedAdmin(t.services);
    const { token } = await scimSchool(t.services);
    const send = directory(t, token);
    const created = await send('POST', '/Users', entraUser('ryan@district.example'));
    expect(created.statusCode, created.body).toBe(201);

    const wrong = await login(t, 'alice', 'not the password at all');
    expect(wrong.statusCode).toBe(401);
    for (const password of [PASSWORD, '!sso-only', 'ryan@district.example']) {
      const refused = await login(t, 'ryan@district.example', password);
      expect(refused.statusCode, password).toBe(401);
      expect(refused.body).toBe(wrong.body);
      expect(refused.headers['content-type']).toBe(wrong.headers['content-type']);
    }

    const { id } = created.json<{ id: string }>();
    const attempts = [
      await send('POST', '/Users', entraUser('eve@district.example', { password: PASSWORD })),
      await send('PUT', `/Users/${id}`, entraUser('ryan@district.example', { password: PASSWORD })),
      await send('PATCH', `/Users/${id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', path: 'password', value: PASSWORD }] }),
      await send('PATCH', `/Users/${id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', value: { password: PASSWORD } }] }),
    ];
    for (const attempt of attempts) {
      expect(attempt.statusCode, attempt.body).toBe(400);
      expect(attempt.json()).toMatchObject({ schemas: [ERROR_SCHEMA], scimType: 'mutability' });
    }
    expect((await login(t, 'ryan@district.example', PASSWORD)).body).toBe(wrong.body);
    const stored = await t.services.db.selectFrom('admins').select('password_hash').where('id', '=', id).executeTakeFirstOrThrow();
    expect(stored.password_hash).toBe('!sso-only');
  });
});
