import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { setPasskeyPolicy } from '../../../src/auth/mfa/passkey-policy.js';
import { seedAdmin, signIn, useTestApps, type TestApp } from '../../helpers/app.js';
import { refresh } from '../../helpers/contract.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { adminWithTotp, loginRequest, passwordStep, totpCode, verify } from '../../helpers/mfa.js';
import {
  LOGIN_REFUSAL, PASSKEY_ENV, adminWithDiscoverablePasskey, refusalOf, registrationOptions, signInAlone, signInWithPasskey, wrongPasswordRefusal,
} from '../../helpers/webauthn-flow.js';

const USE_YOUR_PASSKEY = { detail: 'Sign in with your passkey' };

async function sessionCount(t: TestApp) {
  return (await t.services.db.selectFrom('sessions').select('id').execute()).length;
}

describe.each(TEST_DIALECTS)("a school's passkey policy on %s", (dialect) => {
  const open = useTestApps(dialect);

  it('allowed (the default): the passkey signs in alone, and as the second factor after the password', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithDiscoverablePasskey(t, admin);
    for (const round of ['default', 'allowed']) {
      if (round === 'allowed') await setPasskeyPolicy(t.services, admin.schoolId, 'allowed');
      const alone = await signInAlone(t, authenticator);
      expect(alone.statusCode, `${round}: ${alone.body}`).toBe(200);
      expect(decodeJwt(alone.json<{ access_token: string }>().access_token).amr).toEqual(['hwk', 'user', 'mfa']);
      const afterPassword = await signInWithPasskey(t, admin, authenticator);
      expect(afterPassword.statusCode, `${round}: ${afterPassword.body}`).toBe(200);
      expect(decodeJwt(afterPassword.json<{ access_token: string }>().access_token).amr).toEqual(['pwd', 'hwk', 'mfa']);
    }
  });

  it('off: signing in alone is refused as a wrong password is; the passkey still answers the second factor', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithDiscoverablePasskey(t, admin);
    const refusal = await wrongPasswordRefusal(t, admin);
    expect(refusal).toEqual(LOGIN_REFUSAL);
    await setPasskeyPolicy(t.services, admin.schoolId, 'off');

    const sessions = await sessionCount(t);
    for (const schoolId of [undefined, admin.schoolId]) {
      expect(refusalOf(await signInAlone(t, authenticator, {}, undefined, schoolId)), String(schoolId)).toEqual(refusal);
    }
    expect(await sessionCount(t)).toBe(sessions);
    const failures = await t.services.db.selectFrom('events').select('detail').where('type', '=', 'login.failure').where('detail', 'like', 'passkey%').execute();
    expect(failures).toHaveLength(2);

    const afterPassword = await signInWithPasskey(t, admin, authenticator);
    expect(afterPassword.statusCode, afterPassword.body).toBe(200);
    expect(decodeJwt(afterPassword.json<{ access_token: string }>().access_token)).toMatchObject({ acr: 'aal2', amr: ['pwd', 'hwk', 'mfa'] });

    await setPasskeyPolicy(t.services, admin.schoolId, 'allowed');
    expect((await signInAlone(t, authenticator)).statusCode).toBe(200);
  });

  it("off in one school leaves another school's admins signing in alone", async () => {
    const t = await open(PASSKEY_ENV);
    const alice = await seedAdmin(t.services);
    const bob = await seedAdmin(t.services, { schoolId: 'roosevelt-elementary', username: 'bob' });
    const { authenticator: alices } = await adminWithDiscoverablePasskey(t, alice);
    const { authenticator: bobs } = await adminWithDiscoverablePasskey(t, bob);
    await setPasskeyPolicy(t.services, alice.schoolId, 'off');
    expect((await signInAlone(t, bobs)).statusCode).toBe(200);
    expect(refusalOf(await signInAlone(t, alices))).toEqual(LOGIN_REFUSAL);
  });

  it('required: a right password of an admin with a discoverable passkey answers 403 "Sign in with your passkey", a wrong one the usual 401', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithDiscoverablePasskey(t, admin);
    const unknownRefusal = await wrongPasswordRefusal(t, { ...admin, username: 'nobody' });
    await setPasskeyPolicy(t.services, admin.schoolId, 'required');

    const sessions = await sessionCount(t);
    const right = await loginRequest(t.app, admin);
    expect(right.statusCode, right.body).toBe(403);
    expect(right.json()).toEqual(USE_YOUR_PASSKEY);
    expect(right.body).not.toContain('mfa_token');
    expect(await sessionCount(t)).toBe(sessions);
    expect(await wrongPasswordRefusal(t, admin)).toEqual(LOGIN_REFUSAL);
    expect(await wrongPasswordRefusal(t, admin)).toEqual(unknownRefusal);

    const alone = await signInAlone(t, authenticator);
    expect(alone.statusCode, alone.body).toBe(200);
    expect(decodeJwt(alone.json<{ access_token: string }>().access_token)).toMatchObject({ acr: 'aal2', amr: ['hwk', 'user', 'mfa'] });

    await setPasskeyPolicy(t.services, admin.schoolId, 'allowed');
    expect((await loginRequest(t.app, admin)).json()).toMatchObject({ detail: 'Second factor required', mfa_token: expect.any(String) });
  });

  it('required: admins of the school without a discoverable passkey sign in with the password as before', async () => {
    const t = await open(PASSKEY_ENV);
    const schoolId = 'lincoln-high';
    const plain = await seedAdmin(t.services, { schoolId, username: 'bob' });
    const withTotp = await seedAdmin(t.services, { schoolId, username: 'carol' });
    const withServerSideKey = await seedAdmin(t.services, { schoolId, username: 'dave' });
    const { secret } = await adminWithTotp(t, withTotp);
    const { authenticator: daves } = await adminWithDiscoverablePasskey(t, withServerSideKey, { rk: false });
    await setPasskeyPolicy(t.services, schoolId, 'required');

    const bobs = await loginRequest(t.app, plain);
    expect(bobs.statusCode, bobs.body).toBe(200);
    expect(decodeJwt(bobs.json<{ access_token: string }>().access_token)).toMatchObject({ acr: 'aal1', amr: ['pwd'] });

    const carols = await verify(t, await passwordStep(t, withTotp), totpCode(t, secret));
    expect(carols.statusCode, carols.body).toBe(200);

    const davesChallenge = await loginRequest(t.app, withServerSideKey);
    expect(davesChallenge.json()).toMatchObject({ detail: 'Second factor required', mfa_token: expect.any(String), mfa_methods: expect.arrayContaining(['webauthn']) });
    expect((await signInWithPasskey(t, withServerSideKey, daves)).statusCode).toBe(200);
  });

  it('required: a passkey whose registration did not say rk leaves the password in use until it signs in alone', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithDiscoverablePasskey(t, admin, { rk: undefined });
    await setPasskeyPolicy(t.services, admin.schoolId, 'required');
    expect((await loginRequest(t.app, admin)).json()).toMatchObject({ detail: 'Second factor required', mfa_token: expect.any(String) });
    expect((await signInAlone(t, authenticator)).statusCode).toBe(200);
    const after = await loginRequest(t.app, admin);
    expect(after.statusCode).toBe(403);
    expect(after.json()).toEqual(USE_YOUR_PASSKEY);
  });

  it('required ends the password sessions of the admins it concerns, and only theirs', async () => {
    const t = await open(PASSKEY_ENV);
    const alice = await seedAdmin(t.services);
    const bob = await seedAdmin(t.services, { username: 'bob' });
    const { authenticator, aal1 } = await adminWithDiscoverablePasskey(t, alice);
    const bobs = await signIn(t.app, bob);
    const alone = (await signInAlone(t, authenticator)).json<{ refresh_token: string }>();
    expect((await refresh(t.app, aal1.refresh_token)).statusCode).toBe(200);

    const { sessionsEnded } = await setPasskeyPolicy(t.services, alice.schoolId, 'required');
    expect(sessionsEnded).toBeGreaterThanOrEqual(1);
    expect((await refresh(t.app, aal1.refresh_token)).statusCode).toBe(401);
    expect((await refresh(t.app, alone.refresh_token)).statusCode).toBe(200);
    expect((await refresh(t.app, bobs.refresh_token)).statusCode).toBe(200);
  });

  it('registration options: residentKey required in a required school, preferred otherwise; credProps always', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { access_token } = await signIn(t.app, admin);
    const expected = { off: 'preferred', required: 'required', allowed: 'preferred' } as const;
    for (const [policy, residentKey] of Object.entries(expected) as Array<[keyof typeof expected, string]>) {
      await setPasskeyPolicy(t.services, admin.schoolId, policy);
      const options = await registrationOptions(t, access_token);
      expect({ policy, residentKey: options.authenticatorSelection?.residentKey, userVerification: options.authenticatorSelection?.userVerification })
        .toEqual({ policy, residentKey, userVerification: 'required' });
      expect(options.extensions, policy).toMatchObject({ credProps: true });
    }
  });
});
