import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { changePassword } from '../../../src/auth/accounts/admins.js';
import { registerPasskey as storePasskey } from '../../../src/auth/mfa/passkey-registration.js';
import { authenticateMfaPrincipal } from '../../../src/auth/mfa/principal.js';
import { resetAdminMfa, setMfaPolicy } from '../../../src/auth/mfa/operator.js';
import { AppError } from '../../../src/errors.js';
import { postJson, seedAdmin, signIn, useTestApps } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { adminWithTotp, bearer, loginRequest, passwordStep, totpCode, verify, wrongCode } from '../../helpers/mfa.js';
import { SoftAuthenticator } from '../../helpers/soft-authenticator.js';
import {
  ORIGIN, PASSKEY_ENV, RP_ID, adminWithPasskey, attemptRegistration, registerPasskey, registrationOptions, registrationOptionsRequest,
} from '../../helpers/webauthn-flow.js';

const REGISTRATION_FAILED = { detail: 'Passkey registration failed' };

describe.each(TEST_DIALECTS)('passkey registration on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('creation options as @simplewebauthn/server makes them; the first passkey answers 201 with 10 recovery codes', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const first = await signIn(t.app, admin);
    const options = await registrationOptions(t, first.access_token);
    expect(options).toMatchObject({
      rp: { name: 'school-auth', id: RP_ID },
      user: { id: expect.any(String), name: expect.any(String), displayName: expect.any(String) },
      challenge: expect.stringMatching(/^[A-Za-z0-9_-]{16,}$/),
      timeout: expect.any(Number),
      attestation: 'none',
      excludeCredentials: [],
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
    });
    expect(options.pubKeyCredParams.map((param) => param.alg)).toContain(-7);

    const authenticator = new SoftAuthenticator({ origin: ORIGIN });
    const created = await postJson(t.app, '/admin/auth/mfa/webauthn', { credential: authenticator.register(options) }, bearer(first.access_token));
    expect(created.statusCode, created.body).toBe(201);
    const body = created.json<{ factor_id: string; recovery_codes: string[] }>();
    expect(Object.keys(body).sort()).toEqual(['factor_id', 'recovery_codes']);
    expect(body.recovery_codes).toHaveLength(10);

    const listed = await t.app.inject({ method: 'GET', url: '/admin/auth/mfa', headers: bearer(first.access_token) });
    expect(listed.json()).toEqual({
      factors: [{ factor_id: body.factor_id, type: 'webauthn', name: 'Passkey', created_at: expect.any(String), last_used_at: null, discoverable: null }],
      recovery_codes_left: 10,
    });
    const challenge = await loginRequest(t.app, admin);
    expect(challenge.statusCode).toBe(403);
    expect(challenge.json()).toMatchObject({ detail: 'Second factor required', mfa_methods: ['webauthn', 'recovery_code'] });

    const stored = await t.services.db.selectFrom('mfa_factors').selectAll().execute();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ credential_id: authenticator.id, sign_count: 0, device_type: 'singleDevice' });
    const events = await t.services.db.selectFrom('events').select(['type', 'detail']).where('type', '=', 'mfa.enrolled').execute();
    expect(events).toEqual([{ type: 'mfa.enrolled', detail: `webauthn ${body.factor_id}` }]);
  });

  it('a second factor needs aal2: an aal1 token is refused, an aal2 token adds a named passkey without new codes', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { secret, aal1 } = await adminWithTotp(t, admin);
    const refused = await registrationOptionsRequest(t, aal1.access_token);
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer error="insufficient_user_authentication", acr_values="aal2"');
    const posted = await postJson(t.app, '/admin/auth/mfa/webauthn', { credential: {} }, bearer(aal1.access_token));
    expect(posted.statusCode).toBe(401);

    const aal2 = (await verify(t, await passwordStep(t, admin), totpCode(t, secret))).json<{ access_token: string }>().access_token;
    const key = new SoftAuthenticator({ origin: ORIGIN });
    expect((await registerPasskey(t, aal2, key, 'YubiKey 5C')).recovery_codes).toBeNull();
    const options = await registrationOptions(t, aal2);
    expect(options.excludeCredentials?.map((descriptor) => descriptor.id)).toEqual([key.id]);
    const listed = await t.app.inject({ method: 'GET', url: '/admin/auth/mfa', headers: bearer(aal2) });
    expect(listed.json<{ factors: Array<{ type: string; name: string }> }>().factors.map(({ type, name }) => ({ type, name }))).toEqual([
      { type: 'totp', name: 'Authenticator app' },
      { type: 'webauthn', name: 'YubiKey 5C' },
    ]);
    expect((await loginRequest(t.app, admin)).json().mfa_methods).toEqual(['totp', 'webauthn', 'recovery_code']);
  });

  it('an aal1 token cannot register a second passkey once the first exists', async () => {
    const t = await open(PASSKEY_ENV);
    const { aal1 } = await adminWithPasskey(t, await seedAdmin(t.services));
    const options = await registrationOptionsRequest(t, aal1.access_token);
    expect(options.statusCode).toBe(401);
    expect(options.headers['www-authenticate']).toBe('Bearer error="insufficient_user_authentication", acr_values="aal2"');
    const credential = new SoftAuthenticator({ origin: ORIGIN }).register({
      rp: { id: RP_ID, name: 'school-auth' }, user: { id: 'dXNlcg', name: 'alice', displayName: 'alice' }, challenge: 'Y2hhbGxlbmdl', pubKeyCredParams: [],
    });
    const posted = await postJson(t.app, '/admin/auth/mfa/webauthn', { credential }, bearer(aal1.access_token));
    expect(posted.statusCode).toBe(401);
    expect(await t.services.db.selectFrom('mfa_factors').select('id').execute()).toHaveLength(1);
  });

  it.each([
    ['another origin', { origin: 'https://evil.test' }],
    ['another RP ID', { rpId: 'evil.test' }],
    ['no user verification', { userVerified: false }],
    ['another challenge', { challenge: Buffer.from('not the challenge').toString('base64url') }],
  ])('a credential made with %s answers 400 and stores nothing', async (_, knobs) => {
    const t = await open(PASSKEY_ENV);
    const first = await signIn(t.app, await seedAdmin(t.services));
    const refused = await attemptRegistration(t, first.access_token, new SoftAuthenticator({ origin: ORIGIN }), knobs);
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual(REGISTRATION_FAILED);
    expect(await t.services.db.selectFrom('mfa_factors').select('id').execute()).toEqual([]);
  });

  it('a registration challenge is single-use, replaced by the next options call, and lives 300 s', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { secret } = await adminWithTotp(t, admin);
    const aal2 = (await verify(t, await passwordStep(t, admin), totpCode(t, secret))).json<{ access_token: string }>().access_token;
    const post = (credential: unknown) => postJson(t.app, '/admin/auth/mfa/webauthn', { credential }, bearer(aal2));

    const replaced = new SoftAuthenticator({ origin: ORIGIN }).register(await registrationOptions(t, aal2));
    const current = new SoftAuthenticator({ origin: ORIGIN }).register(await registrationOptions(t, aal2));
    expect((await post(replaced)).json()).toEqual(REGISTRATION_FAILED);
    expect((await post(current)).statusCode).toBe(201);
    const replay = await post(current);
    expect(replay.statusCode).toBe(400);
    expect(replay.json()).toEqual(REGISTRATION_FAILED);

    const late = new SoftAuthenticator({ origin: ORIGIN }).register(await registrationOptions(t, aal2));
    t.clock.advance(301);
    expect((await post(late)).json()).toEqual(REGISTRATION_FAILED);
    expect(await t.services.db.selectFrom('mfa_factors').select('id').execute()).toHaveLength(2);
  });

  it('in a required school the mfa_token registers the first passkey, and the 201 signs in (aal2, hwk)', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    await setMfaPolicy(t.services, admin.schoolId, 'required');
    const challenge = await loginRequest(t.app, admin);
    expect(challenge.json()).toMatchObject({ detail: 'Second factor enrollment required', mfa_methods: [] });
    const mfaToken = challenge.json<{ mfa_token: string }>().mfa_token;

    const enrolled = await registerPasskey(t, mfaToken, new SoftAuthenticator({ origin: ORIGIN }));
    const fields = ['access_token', 'expires_in', 'factor_id', 'recovery_codes', 'refresh_expires_in', 'refresh_token', 'school_id', 'token_type', 'username'];
    expect(Object.keys(enrolled).sort()).toEqual(fields);
    expect(enrolled.recovery_codes).toHaveLength(10);
    expect(decodeJwt(enrolled.access_token!)).toMatchObject({ acr: 'aal2', amr: ['pwd', 'hwk', 'mfa'] });
    // The mfa_token is spent, and an admin with a factor never registers with one.
    expect((await registrationOptionsRequest(t, mfaToken)).statusCode).toBe(401);
    expect((await registrationOptionsRequest(t, await passwordStep(t, admin))).statusCode).toBe(401);
  });

  it('admin mfa reset removes the passkeys; the admin then signs in with the password alone', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    await adminWithPasskey(t, admin);
    expect(await resetAdminMfa(t.services, admin)).toEqual({ factors: 1, sessions: 1 });
    expect(await t.services.db.selectFrom('mfa_factors').select('id').execute()).toEqual([]);
    expect(await t.services.db.selectFrom('webauthn_registrations').select('admin_id').execute()).toEqual([]);
    expect((await loginRequest(t.app, admin)).statusCode).toBe(200);
  });

  it('passkeys off (no WEBAUTHN_RP_ID): the four endpoints answer 404', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const first = await signIn(t.app, admin);
    const { secret } = await adminWithTotp(t, await seedAdmin(t.services, { username: 'bob' }));
    const mfaToken = await passwordStep(t, { ...admin, username: 'bob' });
    const credential = { id: 'x', rawId: 'x', type: 'public-key', response: {}, clientExtensionResults: {} };
    const answers = {
      'registration-options': await registrationOptionsRequest(t, first.access_token),
      registration: await postJson(t.app, '/admin/auth/mfa/webauthn', { credential }, bearer(first.access_token)),
      'request options': await postJson(t.app, '/admin/auth/mfa/webauthn/options', { mfa_token: mfaToken }),
      'verify with method webauthn': await postJson(t.app, '/admin/auth/mfa/verify', { mfa_token: mfaToken, method: 'webauthn', credential }),
    };
    for (const [endpoint, answer] of Object.entries(answers)) {
      expect({ endpoint, status: answer.statusCode, body: answer.json() }).toEqual({ endpoint, status: 404, body: { detail: 'Passkeys are not enabled on this server' } });
    }
    // TOTP still works on the same mfa_token.
    expect((await verify(t, mfaToken, totpCode(t, secret))).statusCode).toBe(200);
  });

  it('a missing or malformed credential answers 422; an over-long name too', async () => {
    const t = await open(PASSKEY_ENV);
    const first = await signIn(t.app, await seedAdmin(t.services));
    const missing = await postJson(t.app, '/admin/auth/mfa/webauthn', { name: 'Key' }, bearer(first.access_token));
    expect(missing.statusCode).toBe(422);
    expect(missing.json().detail[0]).toMatchObject({ type: 'missing', loc: ['body', 'credential'] });
    const notObject = await postJson(t.app, '/admin/auth/mfa/webauthn', { credential: 'abc' }, bearer(first.access_token));
    expect(notObject.json().detail[0]).toMatchObject({ type: 'dict_type', loc: ['body', 'credential'] });
    const credential = new SoftAuthenticator({ origin: ORIGIN }).register(await registrationOptions(t, first.access_token));
    const long = await postJson(t.app, '/admin/auth/mfa/webauthn', { credential, name: 'x'.repeat(65) }, bearer(first.access_token));
    expect(long.statusCode).toBe(422);
    expect(long.json().detail[0]).toMatchObject({ loc: ['body', 'name'] });
  });
});

describe.each(TEST_DIALECTS)('passkey enrollment and the second-factor throttle on %s', (dialect) => {
  const open = useTestApps(dialect);

  it("a passkey enrolled with a required school's mfa_token gives back no failure it did not reserve", async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    await setMfaPolicy(t.services, admin.schoolId, 'required');
    const mfaToken = (await loginRequest(t.app, admin)).json<{ mfa_token: string }>().mfa_token;
    const started = await postJson(t.app, '/admin/auth/mfa/totp', {}, bearer(mfaToken));
    const { factor_id, secret } = started.json<{ factor_id: string; secret: string }>();
    const wrong = wrongCode(t, secret);
    for (let i = 0; i < 3; i++) {
      expect((await postJson(t.app, '/admin/auth/mfa/totp/confirm', { factor_id, code: wrong }, bearer(mfaToken))).statusCode).toBe(401);
    }
    const failures = () => t.services.db.selectFrom('mfa_throttle').select('failures').executeTakeFirstOrThrow();
    expect(await failures()).toEqual({ failures: 3 });

    const enrolled = await registerPasskey(t, mfaToken, new SoftAuthenticator({ origin: ORIGIN }));
    expect(enrolled.access_token).toEqual(expect.any(String));
    expect(await failures()).toEqual({ failures: 3 });
  });
});

describe.each(TEST_DIALECTS)('passkey registration racing an operator on %s', (dialect) => {
  const open = useTestApps(dialect);

  it("stores nothing when the admin's sessions were ended after the bearer was checked", async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { access_token } = await signIn(t.app, admin);
    // The request as it stands once its bearer was checked and its challenge is stored...
    const principal = await authenticateMfaPrincipal(t.services, access_token);
    const credential = new SoftAuthenticator({ origin: ORIGIN }).register(await registrationOptions(t, access_token));
    // ...then an operator ends the admin's sessions before the passkey is stored.
    await changePassword(t.services, admin, 'an entirely new passphrase 42');
    const context = { ip: '127.0.0.1', userAgent: 'test' };
    await expect(storePasskey(t.services, principal, credential, 'Late key', context)).rejects.toThrow(AppError);
    expect(await t.services.db.selectFrom('mfa_factors').select('id').execute()).toEqual([]);
  });
});
