import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { setMfaPolicy } from '../../../src/auth/mfa/operator.js';
import { postJson, seedAdmin, signIn, useTestApps } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { adminWithTotp, bearer, enrollTotp, loginRequest, passwordStep, totpCode, verify } from '../../helpers/mfa.js';

describe.each(TEST_DIALECTS)('second-factor enrollment and management on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('the first factor comes with 10 single-use recovery codes', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { confirmed } = await adminWithTotp(t, admin);
    const codes = confirmed.recovery_codes ?? [];
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[0-9a-z]{5}(-[0-9a-z]{5}){3}$/);
    const stored = await t.services.db.selectFrom('mfa_recovery_codes').select('code_hash').execute();
    expect(stored.map((row) => row.code_hash)).not.toContain(codes[0]);

    const used = await verify(t, await passwordStep(t, admin), codes[0]!.toUpperCase(), 'recovery_code');
    expect(used.statusCode, used.body).toBe(200);
    const token = used.json<{ access_token: string }>().access_token;
    expect(decodeJwt(token)).toMatchObject({ acr: 'aal2', amr: ['pwd', 'mfa'] });
    const again = await verify(t, await passwordStep(t, admin), codes[0]!, 'recovery_code');
    expect(again.json()).toEqual({ detail: 'Invalid second factor' });

    const listed = await t.app.inject({ method: 'GET', url: '/admin/auth/mfa', headers: bearer(token) });
    expect(listed.json()).toEqual({
      factors: [{ factor_id: expect.any(String), type: 'totp', name: 'Authenticator app', created_at: expect.any(String), last_used_at: expect.any(String), discoverable: null }],
      recovery_codes_left: 9,
    });
    expect(listed.body).not.toContain('secret');
  });

  it('a second factor needs an aal2 token: 401 insufficient_user_authentication with aal1; new recovery codes replace the old', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret, aal1, confirmed } = await adminWithTotp(t, admin);
    const stepUp = await postJson(t.app, '/admin/auth/mfa/totp', {}, bearer(aal1.access_token));
    expect(stepUp.statusCode).toBe(401);
    expect(stepUp.headers['www-authenticate']).toBe('Bearer error="insufficient_user_authentication", acr_values="aal2"');
    expect((await postJson(t.app, '/admin/auth/mfa/recovery-codes', {}, bearer(aal1.access_token))).statusCode).toBe(401);

    const aal2 = (await verify(t, await passwordStep(t, admin), totpCode(t, secret))).json<{ access_token: string }>().access_token;
    t.clock.advance(30);
    const second = await enrollTotp(t, aal2);
    expect(second.confirmed.recovery_codes).toBeNull();
    const renewed = await postJson(t.app, '/admin/auth/mfa/recovery-codes', {}, bearer(aal2));
    expect(renewed.statusCode).toBe(200);
    expect(renewed.json<{ recovery_codes: string[] }>().recovery_codes).toHaveLength(10);
    const old = await verify(t, await passwordStep(t, admin), confirmed.recovery_codes![1]!, 'recovery_code');
    expect(old.statusCode).toBe(401);
  });

  it('removing the last factor (aal2) lets the admin sign in with the password alone again', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret, factorId, aal1 } = await adminWithTotp(t, admin);
    const refused = await t.app.inject({ method: 'DELETE', url: `/admin/auth/mfa/${factorId}`, headers: bearer(aal1.access_token) });
    expect(refused.statusCode).toBe(401);
    const aal2 = (await verify(t, await passwordStep(t, admin), totpCode(t, secret))).json<{ access_token: string }>().access_token;
    const unknown = await t.app.inject({ method: 'DELETE', url: '/admin/auth/mfa/nope', headers: bearer(aal2) });
    expect(unknown.statusCode).toBe(404);
    const removed = await t.app.inject({ method: 'DELETE', url: `/admin/auth/mfa/${factorId}`, headers: bearer(aal2) });
    expect(removed.statusCode).toBe(204);
    expect((await loginRequest(t.app, admin)).statusCode).toBe(200);
    expect(await t.services.db.selectFrom('mfa_recovery_codes').select('code_hash').execute()).toEqual([]);
  });

  it('in a required school an admin without a factor enrolls with the mfa_token, and the first code signs in', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    await setMfaPolicy(t.services, admin.schoolId, 'required');
    const before = await t.services.db.selectFrom('sessions').select('id').execute();
    const challenge = await loginRequest(t.app, admin);
    expect(challenge.statusCode).toBe(403);
    const body = challenge.json<{ mfa_token: string }>();
    expect(body).toEqual({ detail: 'Second factor enrollment required', mfa_token: expect.any(String), mfa_methods: [], expires_in: 300 });
    expect(await t.services.db.selectFrom('sessions').select('id').execute()).toEqual(before);
    // Nothing to verify yet: no factor.
    expect((await verify(t, body.mfa_token, '123456')).statusCode).toBe(401);

    const enrolled = await enrollTotp(t, body.mfa_token);
    expect(enrolled.confirmed.recovery_codes).toHaveLength(10);
    expect(decodeJwt(enrolled.confirmed.access_token!)).toMatchObject({ acr: 'aal2', amr: ['pwd', 'otp', 'mfa'] });
    const fields = ['access_token', 'expires_in', 'factor_id', 'recovery_codes', 'refresh_expires_in', 'refresh_token', 'school_id', 'token_type', 'username'];
    expect(Object.keys(enrolled.confirmed).sort()).toEqual(fields);

    // The mfa_token is spent, and an admin with a factor never enrolls with one.
    expect((await postJson(t.app, '/admin/auth/mfa/totp', {}, bearer(body.mfa_token))).statusCode).toBe(401);
    t.clock.advance(30);
    const next = await passwordStep(t, admin);
    expect((await postJson(t.app, '/admin/auth/mfa/totp', {}, bearer(next))).statusCode).toBe(401);
    expect((await verify(t, next, totpCode(t, enrolled.secret))).statusCode).toBe(200);
  });

  it('an aal1 admin without a factor in an optional school still signs in and may enroll', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const first = await signIn(t.app, admin);
    const started = await postJson(t.app, '/admin/auth/mfa/totp', {}, bearer(first.access_token));
    expect(started.statusCode).toBe(200);
    expect(started.json().otpauth_uri).toMatch(/^otpauth:\/\/totp\//);
    // Unconfirmed: login is unchanged.
    expect((await loginRequest(t.app, admin)).statusCode).toBe(200);
  });
});
