import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { seedAdmin, signIn, useTestApps, postJson } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { adminWithTotp, bearer, loginRequest, passwordStep, totpCode, verify, wrongCode } from '../../helpers/mfa.js';

const LOGIN_FIELDS = ['access_token', 'expires_in', 'refresh_expires_in', 'refresh_token', 'school_id', 'token_type', 'username'];

describe.each(TEST_DIALECTS)('sign-in with a second factor on %s', (dialect) => {
  const open = useTestApps(dialect);

  async function sessionCount(t: Awaited<ReturnType<typeof open>>) {
    return (await t.services.db.selectFrom('sessions').select('id').execute()).length;
  }

  it('an admin without a factor signs in as before, with an aal1 pwd token', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const body = await signIn(t.app, admin);
    expect(Object.keys(body).sort()).toEqual(LOGIN_FIELDS);
    const claims = decodeJwt(body.access_token);
    expect(claims.acr).toBe('aal1');
    expect(claims.amr).toEqual(['pwd']);
  });

  it('a right password answers 403 with an mfa_token and starts no session; verify answers the login 200 body', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret } = await adminWithTotp(t, admin);
    const before = await sessionCount(t);
    const challenge = await loginRequest(t.app, admin);
    expect(challenge.statusCode).toBe(403);
    expect(challenge.headers['cache-control']).toBe('no-store');
    const body = challenge.json();
    expect(Object.keys(body)).toEqual(['detail', 'mfa_token', 'mfa_methods', 'expires_in']);
    expect(body).toEqual({ detail: 'Second factor required', mfa_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), mfa_methods: ['totp', 'recovery_code'], expires_in: 300 });
    expect(await sessionCount(t)).toBe(before);

    const verified = await verify(t, body.mfa_token, totpCode(t, secret));
    expect(verified.statusCode, verified.body).toBe(200);
    expect(Object.keys(verified.json()).sort()).toEqual(LOGIN_FIELDS);
    expect(verified.json()).toMatchObject({ school_id: admin.schoolId, username: admin.username, token_type: 'bearer', expires_in: 900 });
    expect(verified.headers['cache-control']).toBe('no-store');
    expect(await sessionCount(t)).toBe(before + 1);
    const claims = decodeJwt(verified.json<{ access_token: string }>().access_token);
    expect(claims.acr).toBe('aal2');
    expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);

    // The mfa_token ended with its success.
    const again = await verify(t, body.mfa_token, totpCode(t, secret, 1));
    expect(again.statusCode).toBe(401);
    expect(again.json()).toEqual({ detail: 'Invalid or expired mfa_token' });
  });

  it('a wrong password for an admin with a factor is still the one 401', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    await adminWithTotp(t, admin);
    const refused = await loginRequest(t.app, { ...admin, password: 'wrong password entirely' });
    const unknown = await loginRequest(t.app, { ...admin, username: 'nobody' });
    expect(refused.statusCode).toBe(401);
    expect(refused.body).toBe('{"detail":"Incorrect username or password"}');
    expect(refused.body).toBe(unknown.body);
    expect(refused.headers['www-authenticate']).toBe('Bearer');
  });

  it('a TOTP code is accepted once: replayed on a new sign-in it is refused', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret } = await adminWithTotp(t, admin);
    const code = totpCode(t, secret);
    expect((await verify(t, await passwordStep(t, admin), code)).statusCode).toBe(200);
    const replay = await verify(t, await passwordStep(t, admin), code);
    expect(replay.statusCode).toBe(401);
    expect(replay.json()).toEqual({ detail: 'Invalid second factor' });
    // An earlier step's code is refused too, once a later one was used.
    expect((await verify(t, await passwordStep(t, admin), totpCode(t, secret, -1))).statusCode).toBe(401);
  });

  it('parallel verifications of one code: exactly one session starts', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret } = await adminWithTotp(t, admin);
    const mfaToken = await passwordStep(t, admin);
    const code = totpCode(t, secret);
    const answers = await Promise.all(Array.from({ length: 4 }, () => verify(t, mfaToken, code)));
    expect(answers.map((answer) => answer.statusCode).filter((status) => status === 200)).toHaveLength(1);
  });

  it('accepts one step of clock drift either way, not two', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret } = await adminWithTotp(t, admin);
    expect((await verify(t, await passwordStep(t, admin), totpCode(t, secret, -2))).statusCode).toBe(401);
    expect((await verify(t, await passwordStep(t, admin), totpCode(t, secret, 2))).statusCode).toBe(401);
    expect((await verify(t, await passwordStep(t, admin), totpCode(t, secret, 1))).statusCode).toBe(200);
  });

  it('wrong codes answer 401 Invalid second factor; after 5 the mfa_token is dead, even for the right code', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret } = await adminWithTotp(t, admin);
    const mfaToken = await passwordStep(t, admin);
    for (let i = 0; i < 5; i++) {
      const wrong = await verify(t, mfaToken, wrongCode(t, secret));
      expect(wrong.statusCode).toBe(401);
      expect(wrong.body).toBe('{"detail":"Invalid second factor"}');
    }
    const dead = await verify(t, mfaToken, totpCode(t, secret));
    expect(dead.statusCode).toBe(401);
    expect(dead.json()).toEqual({ detail: 'Invalid or expired mfa_token' });
  });

  it('the mfa_token lives 300 s', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret } = await adminWithTotp(t, admin);
    const mfaToken = await passwordStep(t, admin);
    t.clock.advance(300);
    expect((await verify(t, mfaToken, totpCode(t, secret))).json()).toEqual({ detail: 'Invalid or expired mfa_token' });
  });

  it('acr and amr are kept by refresh and shown by /admin/auth/me', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret } = await adminWithTotp(t, admin);
    const signedIn = (await verify(t, await passwordStep(t, admin), totpCode(t, secret))).json<{ access_token: string; refresh_token: string }>();
    t.clock.advance(120);
    const refreshed = await postJson(t.app, '/auth/refresh', { refresh_token: signedIn.refresh_token });
    expect(refreshed.statusCode).toBe(200);
    const claims = decodeJwt(refreshed.json<{ access_token: string }>().access_token);
    expect({ acr: claims.acr, amr: claims.amr }).toEqual({ acr: 'aal2', amr: ['pwd', 'otp', 'mfa'] });
    const me = await t.app.inject({ method: 'GET', url: '/admin/auth/me', headers: bearer(signedIn.access_token) });
    expect(me.json()).toMatchObject({ acr: 'aal2', amr: ['pwd', 'otp', 'mfa'] });
    const own = await t.app.inject({ method: 'GET', url: '/admin/auth/sessions', headers: bearer(signedIn.access_token) });
    const sessions = own.json<{ sessions: Array<{ acr: string; current: boolean }> }>().sessions;
    // The session of the enrollment was signed in with the password only; this one with TOTP.
    expect(sessions.map(({ acr, current }) => ({ acr, current }))).toEqual([
      { acr: 'aal2', current: true },
      { acr: 'aal1', current: false },
    ]);

    const plain = await seedAdmin(t.services, { username: 'bob' });
    const aal1 = await signIn(t.app, plain);
    const refreshedAal1 = await postJson(t.app, '/auth/refresh', { refresh_token: aal1.refresh_token });
    expect(decodeJwt(refreshedAal1.json<{ access_token: string }>().access_token)).toMatchObject({ acr: 'aal1', amr: ['pwd'] });
  });

  it('never echoes code or mfa_token in a 422, and refuses an unknown method as Pydantic does', async () => {
    const t = await open();
    const missing = await postJson(t.app, '/admin/auth/mfa/verify', { mfa_token: 'secret-token', code: '123456' });
    expect(missing.statusCode).toBe(422);
    expect(missing.json()).toEqual({
      detail: [{ type: 'missing', loc: ['body', 'method'], msg: 'Field required', input: { mfa_token: '[redacted]', code: '[redacted]' } }],
    });
    const tooLong = await postJson(t.app, '/admin/auth/mfa/verify', { mfa_token: 'x', method: 'totp', code: 9 });
    expect(tooLong.body).not.toContain('9,');
    expect(tooLong.json().detail[0]).toMatchObject({ type: 'string_type', loc: ['body', 'code'], input: '[redacted]' });
    const method = await postJson(t.app, '/admin/auth/mfa/verify', { mfa_token: 'x', method: 'sms', code: '1' });
    expect(method.json()).toEqual({
      detail: [{ type: 'literal_error', loc: ['body', 'method'], msg: "Input should be 'totp', 'webauthn' or 'recovery_code'", input: 'sms', ctx: { expected: "'totp', 'webauthn' or 'recovery_code'" } }],
    });
  });
});
