/** Self-service: POST /admin/auth/password, authenticated by the admin's access token. */
import { describe, expect, it } from 'vitest';
import { useTestApps, postJson, seedAdmin, signIn, PASSWORD } from '../../helpers/app.js';
import { BODIES, auditEvents, me, refresh } from '../../helpers/contract.js';
import { TEST_DIALECTS } from '../../helpers/database.js';

const NEW_PASSWORD = 'a brand new passphrase';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe.each(TEST_DIALECTS)('self-service password change on %s', (dialect) => {
  const open = useTestApps(dialect);

  async function setup() {
    const t = await open();
    const alice = await seedAdmin(t.services);
    const other = await signIn(t.app, alice);
    const current = await signIn(t.app, alice);
    const change = (body: unknown, token = current.access_token) => postJson(t.app, '/admin/auth/password', body, bearer(token));
    return { t, alice, other, current, change };
  }

  it('changes the password, ends every other session at once and keeps the current one', async () => {
    const { t, alice, other, current, change } = await setup();
    const response = await change({ current_password: PASSWORD, new_password: NEW_PASSWORD });
    expect(response.statusCode).toBe(204);
    expect((await refresh(t.app, other.refresh_token)).statusCode).toBe(401);
    expect((await me(t.app, other.access_token)).statusCode).toBe(401);
    expect((await me(t.app, current.access_token)).statusCode).toBe(200);
    expect((await refresh(t.app, current.refresh_token)).statusCode).toBe(200);
    expect((await postJson(t.app, '/admin/auth/login', { school_id: alice.schoolId, username: alice.username, password: PASSWORD })).statusCode).toBe(401);
    await signIn(t.app, { ...alice, password: NEW_PASSWORD });
    const [event] = await auditEvents(t, 'admin.password_changed');
    expect(event).toMatchObject({ username: 'alice', detail: 'self-service: 1 other sessions ended' });
    expect(event?.session_id).toBe((await me(t.app, current.access_token)).json().sid);
  });

  it('answers 401 "Incorrect password" to a wrong current password, changes nothing, and counts it as a failed login', async () => {
    const { t, alice, other, change } = await setup();
    for (let i = 1; i <= 5; i++) {
      const response = await change({ current_password: `wrong guess ${i}`, new_password: NEW_PASSWORD });
      expect(response.statusCode, `guess ${i}`).toBe(401);
      expect(response.body).toBe('{"detail":"Incorrect password"}');
      expect(response.headers['www-authenticate']).toBe('Bearer');
    }
    expect((await refresh(t.app, other.refresh_token)).statusCode).toBe(200);
    expect(await auditEvents(t, 'login.failure')).toHaveLength(5);
    // Five failures from this address: the next login, even with the right password, waits.
    const login = await postJson(t.app, '/admin/auth/login', { school_id: alice.schoolId, username: alice.username, password: PASSWORD });
    expect(login.statusCode).toBe(429);
    const throttled = await change({ current_password: PASSWORD, new_password: NEW_PASSWORD });
    expect(throttled.statusCode).toBe(429);
    expect(throttled.headers['retry-after']).toBe('1');
  });

  it('gives the attempt back when the current password is right: it is not a failed login', async () => {
    const { t, alice, change } = await setup();
    for (let i = 0; i < 4; i++) expect((await change({ current_password: 'wrong', new_password: NEW_PASSWORD })).statusCode).toBe(401);
    expect((await change({ current_password: PASSWORD, new_password: NEW_PASSWORD })).statusCode).toBe(204);
    // The fifth failure is let through (401); had the right password counted, it would be the sixth (429).
    expect((await postJson(t.app, '/admin/auth/login', { school_id: alice.schoolId, username: alice.username, password: 'wrong' })).statusCode).toBe(401);
  });

  it('refuses a new password that breaks the rules of the CLI with one 422 item, never echoing it', async () => {
    const { t, other, change } = await setup();
    const cases: [string, string][] = [
      ['short', 'the password must be at least 12 characters long'],
      ['ALICE', 'the password must be at least 12 characters long'],
      ['Lincoln-High', 'the password must not be the school id'],
    ];
    for (const [password, problem] of cases) {
      const response = await change({ current_password: PASSWORD, new_password: password });
      expect(response.statusCode, password).toBe(422);
      expect(response.json(), password).toEqual({
        detail: [{ type: 'value_error', loc: ['body', 'new_password'], msg: `Value error, ${problem}`, input: '[redacted]', ctx: { error: {} } }],
      });
    }
    expect((await refresh(t.app, other.refresh_token)).statusCode).toBe(200);
    expect(await auditEvents(t, 'login.failure')).toEqual([]);
  });

  it('validates the body like FastAPI with both passwords redacted, and only after the bearer token', async () => {
    const { change, current } = await setup();
    const missing = await change({ current_password: 'my secret one' });
    expect(missing.statusCode).toBe(422);
    expect(missing.json()).toEqual({
      detail: [{ type: 'missing', loc: ['body', 'new_password'], msg: 'Field required', input: { current_password: '[redacted]' } }],
    });
    const wrongType = await change({ current_password: 'my secret one', new_password: 12 });
    expect(wrongType.json().detail[0]).toMatchObject({ type: 'string_type', loc: ['body', 'new_password'], input: '[redacted]' });
    expect(wrongType.body).not.toContain('my secret one');
    const noToken = await change({ current_password: 'x' }, `${current.access_token}x`);
    expect(noToken.statusCode).toBe(401);
    expect(noToken.body).toBe(BODIES.invalidAccessToken);
  });
});
