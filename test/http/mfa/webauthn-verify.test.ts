import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { postJson, seedAdmin, useTestApps } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { adminWithTotp, passwordStep } from '../../helpers/mfa.js';
import { SoftAuthenticator } from '../../helpers/soft-authenticator.js';
import {
  LOGIN_FIELDS, ORIGIN, PASSKEY_ENV, RP_ID, adminWithPasskey, assertWith, requestOptions, requestOptionsRequest, signInWithPasskey, verifyPasskey,
} from '../../helpers/webauthn-flow.js';

const INVALID_FACTOR = { detail: 'Invalid second factor' };
const DEAD_TOKEN = { detail: 'Invalid or expired mfa_token' };

describe.each(TEST_DIALECTS)('sign-in with a passkey on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('request options, then verify: exactly the login 200 body, aal2 with hwk for a device-bound key', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithPasskey(t, admin);
    const mfaToken = await passwordStep(t, admin);
    const options = await requestOptions(t, mfaToken);
    expect(options).toMatchObject({ challenge: expect.stringMatching(/^[A-Za-z0-9_-]{16,}$/), timeout: expect.any(Number), rpId: RP_ID, userVerification: 'required' });
    expect(options.allowCredentials?.map(({ id, type }) => ({ id, type }))).toEqual([{ id: authenticator.id, type: 'public-key' }]);

    const verified = await verifyPasskey(t, mfaToken, authenticator.authenticate(options));
    expect(verified.statusCode, verified.body).toBe(200);
    expect(Object.keys(verified.json()).sort()).toEqual(LOGIN_FIELDS);
    expect(verified.json()).toMatchObject({ school_id: admin.schoolId, username: admin.username, token_type: 'bearer', expires_in: 900 });
    expect(verified.headers['cache-control']).toBe('no-store');
    const access = verified.json<{ access_token: string }>().access_token;
    expect(decodeJwt(access)).toMatchObject({ acr: 'aal2', amr: ['pwd', 'hwk', 'mfa'] });

    const stored = await t.services.db.selectFrom('mfa_factors').select(['sign_count', 'last_used_at']).executeTakeFirstOrThrow();
    expect(stored.sign_count).toBe(1);
    expect(stored.last_used_at).not.toBeNull();
    expect((await requestOptionsRequest(t, mfaToken)).json()).toEqual(DEAD_TOKEN);
    const events = await t.services.db.selectFrom('events').select('type').where('type', '=', 'mfa.success').execute();
    expect(events).toHaveLength(1);
  });

  it('a synced passkey signs in with swk', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithPasskey(t, admin, true);
    const verified = await signInWithPasskey(t, admin, authenticator);
    expect(verified.statusCode, verified.body).toBe(200);
    expect(decodeJwt(verified.json<{ access_token: string }>().access_token)).toMatchObject({ acr: 'aal2', amr: ['pwd', 'swk', 'mfa'] });
  });

  it('another origin, another RP ID, no user verification, an unknown credential: 401 Invalid second factor', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithPasskey(t, admin);
    const stranger = new SoftAuthenticator({ origin: ORIGIN });
    const mfaToken = await passwordStep(t, admin);
    const refusals = [
      await assertWith(t, mfaToken, authenticator, { origin: 'https://evil.test' }),
      await assertWith(t, mfaToken, authenticator, { rpId: 'evil.test' }),
      await assertWith(t, mfaToken, authenticator, { userVerified: false }),
    ];
    stranger.register({ rp: { id: RP_ID, name: 'x' }, user: { id: 'dXNlcg', name: 'x', displayName: 'x' }, challenge: 'Y2hhbGxlbmdl', pubKeyCredParams: [] });
    refusals.push(await assertWith(t, mfaToken, stranger));
    for (const refused of refusals) {
      expect(refused.statusCode).toBe(401);
      expect(refused.json()).toEqual(INVALID_FACTOR);
    }
    // Four guesses of five: the mfa_token still signs in with the right assertion.
    expect((await assertWith(t, mfaToken, authenticator)).statusCode).toBe(200);
    expect(await t.services.db.selectFrom('events').select('type').where('type', '=', 'mfa.failure').execute()).toHaveLength(4);
  });

  it('another admin\'s passkey does not sign in this admin', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    await adminWithPasskey(t, admin);
    const { authenticator: bobs } = await adminWithPasskey(t, await seedAdmin(t.services, { username: 'bob' }));
    const refused = await signInWithPasskey(t, admin, bobs);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual(INVALID_FACTOR);
  });

  it('an assertion or its challenge used again, or a challenge of another mfa_token, is refused', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithPasskey(t, admin);
    const first = await passwordStep(t, admin);
    const firstOptions = await requestOptions(t, first);
    const used = authenticator.authenticate(firstOptions);
    const sameChallenge = authenticator.authenticate(firstOptions);
    const second = await passwordStep(t, admin);
    await requestOptions(t, second);
    // first's challenge, offered to second: refused, and first still accepts its own.
    const crossed = await verifyPasskey(t, second, used);
    expect(crossed.json()).toEqual(INVALID_FACTOR);
    expect((await verifyPasskey(t, first, used)).statusCode).toBe(200);

    const third = await passwordStep(t, admin);
    await requestOptions(t, third);
    for (const replay of [used, sameChallenge]) {
      const refused = await verifyPasskey(t, third, replay);
      expect(refused.statusCode).toBe(401);
      expect(refused.json()).toEqual(INVALID_FACTOR);
    }
  });

  it('a new options call replaces the challenge of the mfa_token', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithPasskey(t, admin);
    const mfaToken = await passwordStep(t, admin);
    const stale = authenticator.authenticate(await requestOptions(t, mfaToken));
    await requestOptions(t, mfaToken);
    expect((await verifyPasskey(t, mfaToken, stale)).json()).toEqual(INVALID_FACTOR);
    expect((await assertWith(t, mfaToken, authenticator)).statusCode).toBe(200);
  });

  it('a challenge past 300 s is refused with its mfa_token', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithPasskey(t, admin);
    const mfaToken = await passwordStep(t, admin);
    const late = authenticator.authenticate(await requestOptions(t, mfaToken));
    t.clock.advance(301);
    const refused = await verifyPasskey(t, mfaToken, late);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual(DEAD_TOKEN);
  });

  it('a signature counter that does not increase (a cloned key) is refused', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithPasskey(t, admin);
    expect((await signInWithPasskey(t, admin, authenticator)).statusCode).toBe(200);
    expect(authenticator.counter).toBe(1);
    const mfaToken = await passwordStep(t, admin);
    for (const counter of [1, 0]) {
      const refused = await assertWith(t, mfaToken, authenticator, { counter });
      expect(refused.statusCode).toBe(401);
      expect(refused.json()).toEqual(INVALID_FACTOR);
    }
    expect((await t.services.db.selectFrom('mfa_factors').select('sign_count').executeTakeFirstOrThrow()).sign_count).toBe(1);
    expect((await assertWith(t, mfaToken, authenticator)).statusCode).toBe(200);
  });

  it('a passkey whose counter stays 0 (synced passkeys often do not count) signs in every time', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithPasskey(t, admin, true);
    for (let i = 0; i < 2; i++) expect((await signInWithPasskey(t, admin, authenticator, { counter: 0 })).statusCode).toBe(200);
  });

  it('wrong passkeys spend the mfa_token\'s 5 guesses, and 10 in the window throttle the admin', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithPasskey(t, admin);
    for (let round = 0; round < 2; round++) {
      const mfaToken = await passwordStep(t, admin);
      for (let i = 0; i < 5; i++) expect((await assertWith(t, mfaToken, authenticator, { userVerified: false })).json()).toEqual(INVALID_FACTOR);
      const spent = await verifyPasskey(t, mfaToken, authenticator.authenticate({ challenge: 'Y2hhbGxlbmdl', rpId: RP_ID }));
      expect(spent.json()).toEqual(DEAD_TOKEN);
    }
    const throttled = await signInWithPasskey(t, admin, authenticator);
    expect(throttled.statusCode).toBe(429);
    expect(throttled.json()).toEqual({ detail: 'Too many failed second factors. Try again later.' });
    expect(Number(throttled.headers['retry-after'])).toBe(900);
    t.clock.advance(900);
    expect((await signInWithPasskey(t, admin, authenticator)).statusCode).toBe(200);
  });

  it('parallel verifications of one assertion: exactly one 200', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithPasskey(t, admin);
    const mfaToken = await passwordStep(t, admin);
    const assertion = authenticator.authenticate(await requestOptions(t, mfaToken));
    const answers = await Promise.all(Array.from({ length: 4 }, () => verifyPasskey(t, mfaToken, assertion)));
    const statuses = answers.map((answer) => answer.statusCode);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 401)).toHaveLength(3);
    expect(await t.services.db.selectFrom('sessions').select('id').where('acr', '=', 'aal2').execute()).toHaveLength(1);
  });

  it('options: 401 for a dead mfa_token, 409 when the admin has no passkey', async () => {
    const t = await open(PASSKEY_ENV);
    const dead = await requestOptionsRequest(t, 'not-a-live-token');
    expect(dead.statusCode).toBe(401);
    expect(dead.json()).toEqual(DEAD_TOKEN);
    const admin = await seedAdmin(t.services);
    await adminWithTotp(t, admin);
    const none = await requestOptionsRequest(t, await passwordStep(t, admin));
    expect(none.statusCode).toBe(409);
    expect(none.json()).toEqual({ detail: 'No second factor enrolled' });
  });

  it('422: totp or recovery_code without code, webauthn without credential or with a credential that is not an object', async () => {
    const t = await open(PASSKEY_ENV);
    const send = (body: Record<string, unknown>) => postJson(t.app, '/admin/auth/mfa/verify', { mfa_token: 'secret-token', ...body });
    for (const method of ['totp', 'recovery_code']) {
      const missing = await send({ method });
      expect(missing.statusCode).toBe(422);
      expect(missing.json().detail).toEqual([expect.objectContaining({ type: 'missing', loc: ['body', 'code'], msg: 'Field required' })]);
      expect(missing.body).not.toContain('secret-token');
    }
    // null counts as absent, as it does for code.
    for (const body of [{ method: 'webauthn' }, { method: 'webauthn', credential: null }]) {
      const noCredential = await send(body);
      expect(noCredential.statusCode).toBe(422);
      expect(noCredential.json().detail).toEqual([expect.objectContaining({ type: 'missing', loc: ['body', 'credential'], msg: 'Field required' })]);
    }
    for (const credential of ['abc', 7, ['a']]) {
      const wrong = await send({ method: 'webauthn', credential });
      expect(wrong.statusCode).toBe(422);
      expect(wrong.json().detail).toEqual([expect.objectContaining({ type: 'dict_type', loc: ['body', 'credential'], msg: 'Input should be a valid dictionary' })]);
    }
    expect((await postJson(t.app, '/admin/auth/mfa/webauthn/options', {})).json().detail[0]).toMatchObject({ type: 'missing', loc: ['body', 'mfa_token'] });
  });
});
