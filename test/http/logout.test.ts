import { decodeJwt } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalKey } from '../../src/auth/identity.js';
import { createTestApp, seedAdmin, signIn, type TestApp } from '../helpers/app.js';
import { BODIES, ENDPOINTS, INVALID_TOKEN_CHALLENGE, auditEvents, logout, me, postRaw, refresh } from '../helpers/contract.js';
import { TEST_DIALECTS } from '../helpers/database.js';

describe.each(TEST_DIALECTS)('POST /auth/logout on %s', (dialect) => {
  let t: TestApp;
  let admin: Awaited<ReturnType<typeof seedAdmin>>;
  beforeEach(async () => {
    t = await createTestApp({}, dialect);
    admin = await seedAdmin(t.services, { schoolId: 'Lincoln-High' });
  });
  afterEach(() => t.close());

  it('answers 204 with an empty body for a valid token', async () => {
    const session = await signIn(t.app, admin);
    const response = await logout(t.app, session.refresh_token);
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    expect(response.rawPayload).toHaveLength(0);
  });

  it('answers the same 204 for unknown, garbage and already ended tokens (RFC 7009)', async () => {
    const session = await signIn(t.app, admin);
    await logout(t.app, session.refresh_token);
    for (const token of [session.refresh_token, 'A'.repeat(43), 'garbage', '']) {
      const response = await logout(t.app, token);
      expect(response.statusCode, token).toBe(204);
      expect(response.body).toBe('');
    }
  });

  it('ends the session: refresh and /admin/auth/me refuse it afterwards', async () => {
    const session = await signIn(t.app, admin);
    const other = await signIn(t.app, admin);
    expect((await me(t.app, session.access_token)).statusCode).toBe(200);
    await logout(t.app, session.refresh_token);

    const refreshed = await refresh(t.app, session.refresh_token);
    expect(refreshed.statusCode).toBe(401);
    expect(refreshed.body).toBe(BODIES.invalidRefreshToken);
    expect(refreshed.headers['www-authenticate']).toBe(INVALID_TOKEN_CHALLENGE);

    const whoAmI = await me(t.app, session.access_token);
    expect(whoAmI.statusCode).toBe(401);
    expect(whoAmI.body).toBe(BODIES.invalidAccessToken);
    expect(whoAmI.headers['www-authenticate']).toBe('Bearer');

    // Only that session ended.
    expect((await refresh(t.app, other.refresh_token)).statusCode).toBe(200);
    expect((await me(t.app, other.access_token)).statusCode).toBe(200);
  });

  it('records a logout event with who, which session, IP and user agent, once', async () => {
    const session = await signIn(t.app, admin);
    const send = (token: string) =>
      t.app.inject({
        method: 'POST',
        url: ENDPOINTS.logout,
        payload: { refresh_token: token },
        remoteAddress: '192.0.2.44',
        headers: { 'user-agent': 'logout-test/2.0' },
      });
    await send(session.refresh_token);
    await send(session.refresh_token);
    await send('A'.repeat(43));
    const events = await auditEvents(t, 'logout');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      school_id: canonicalKey('Lincoln-High'),
      username: admin.username,
      admin_id: decodeJwt(session.access_token).sub,
      session_id: decodeJwt(session.access_token).sid,
      ip: '192.0.2.44',
      user_agent: 'logout-test/2.0',
    });
    expect(events[0]!.at).toBe(t.clock.now());
  });

  it('answers 422 for a malformed body and keeps the session', async () => {
    const session = await signIn(t.app, admin);
    const cases: [string, string | undefined, unknown][] = [
      ['{}', 'application/json', [{ type: 'missing', loc: ['body', 'refresh_token'], msg: 'Field required', input: {} }]],
      [
        `{"refresh_token": ["${session.refresh_token}"]}`,
        'application/json',
        [{ type: 'string_type', loc: ['body', 'refresh_token'], msg: 'Input should be a valid string', input: '[redacted]' }],
      ],
      [
        JSON.stringify({ refresh_token: session.refresh_token }),
        'text/plain',
        [{ type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', input: '[redacted]' }],
      ],
      ['', 'application/json', [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]],
    ];
    for (const [payload, contentType, detail] of cases) {
      const response = await postRaw(t.app, ENDPOINTS.logout, payload, contentType);
      expect(response.statusCode, payload).toBe(422);
      expect(response.json()).toEqual({ detail });
      expect(response.body).not.toContain(session.refresh_token);
    }
    expect((await refresh(t.app, session.refresh_token)).statusCode).toBe(200);
    expect(await auditEvents(t, 'logout')).toEqual([]);
  });
});

describe.each(TEST_DIALECTS)('POST /auth/logout with rotation on %s', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ REFRESH_TOKEN_ROTATION: 'on' }, dialect);
  });
  afterEach(() => t.close());

  it('ends a rotated session whichever of its tokens is presented', async () => {
    const session = await signIn(t.app, await seedAdmin(t.services));
    const successor = (await refresh(t.app, session.refresh_token)).json().refresh_token as string;
    t.clock.advance(60);
    expect((await logout(t.app, session.refresh_token)).statusCode).toBe(204);
    expect((await refresh(t.app, successor)).statusCode).toBe(401);
    expect((await me(t.app, session.access_token)).statusCode).toBe(401);
  });
});
