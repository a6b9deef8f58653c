import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { setAdminEnabled } from '../../../src/auth/accounts/admins.js';
import { resumeSchool, suspendSchool } from '../../../src/auth/accounts/schools.js';
import { seedAdmin, useTestApps, type TestApp } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { SoftAuthenticator } from '../../helpers/soft-authenticator.js';
import {
  LOGIN_REFUSAL, ORIGIN, PASSKEY_ENV, RP_ID, adminWithDiscoverablePasskey, impostorOf, passkeyLogin, passkeyOptions, refusalOf, signInAlone,
  userHandleOf, withCredentialId, wrongPasswordRefusal,
} from '../../helpers/webauthn-flow.js';

type Seeded = Awaited<ReturnType<typeof seedAdmin>>;

/**
 * An admin with a discoverable passkey, and the answer a wrong password gets: every refused
 * passkey sign-in must answer exactly that (status, whole body, WWW-Authenticate).
 */
async function setUp(t: TestApp, admin?: Seeded) {
  const seeded = admin ?? (await seedAdmin(t.services));
  const { authenticator } = await adminWithDiscoverablePasskey(t, seeded);
  const refusal = await wrongPasswordRefusal(t, seeded);
  expect(refusal).toEqual(LOGIN_REFUSAL);
  return { admin: seeded, authenticator, refusal };
}

function expectRefused(answer: LightMyRequestResponse, refusal: ReturnType<typeof refusalOf>, why = '') {
  expect(refusalOf(answer), why).toEqual(refusal);
}

async function passkeyFailures(t: TestApp) {
  return t.services.db.selectFrom('events').select(['detail', 'admin_id']).where('type', '=', 'login.failure').where('detail', 'like', 'passkey%').execute();
}

async function sessionCount(t: TestApp) {
  return (await t.services.db.selectFrom('sessions').select('id').execute()).length;
}

describe.each(TEST_DIALECTS)('passkey-alone sign-in refusals on %s', (dialect) => {
  const open = useTestApps(dialect);

  it.each([
    ['another origin', { origin: 'https://evil.test' }],
    ['another RP ID', { rpId: 'evil.test' }],
    ['no user verification', { userVerified: false }],
    ['no user handle', { userHandle: null }],
  ] as const)('an assertion with %s is refused as a wrong password is; the honest one then signs in', async (_, knobs) => {
    const t = await open(PASSKEY_ENV);
    const { authenticator, refusal } = await setUp(t);
    const sessions = await sessionCount(t);
    expectRefused(await signInAlone(t, authenticator, knobs), refusal);
    expect(await sessionCount(t)).toBe(sessions);
    expect(await passkeyFailures(t)).toHaveLength(1);
    expect((await signInAlone(t, authenticator)).statusCode).toBe(200);
  });

  it('the same assertion twice: the replay is refused', async () => {
    const t = await open(PASSKEY_ENV);
    const { authenticator, refusal } = await setUp(t);
    const assertion = authenticator.authenticate(await passkeyOptions(t));
    expect((await passkeyLogin(t, assertion)).statusCode).toBe(200);
    expectRefused(await passkeyLogin(t, assertion), refusal);
  });

  it('one challenge answered by two different valid assertions: the second is refused', async () => {
    const t = await open(PASSKEY_ENV);
    const { authenticator, refusal } = await setUp(t);
    const options = await passkeyOptions(t);
    const first = authenticator.authenticate(options);
    const second = authenticator.authenticate(options);
    expect(second.response.signature).not.toBe(first.response.signature);
    expect((await passkeyLogin(t, first)).statusCode).toBe(200);
    expectRefused(await passkeyLogin(t, second), refusal);
  });

  it('one assertion posted four times at once: exactly one session starts', async () => {
    const t = await open(PASSKEY_ENV);
    const { authenticator, refusal } = await setUp(t);
    const sessions = await sessionCount(t);
    const assertion = authenticator.authenticate(await passkeyOptions(t));
    const answers = await Promise.all(Array.from({ length: 4 }, () => passkeyLogin(t, assertion)));
    expect(answers.filter((answer) => answer.statusCode === 200)).toHaveLength(1);
    for (const answer of answers.filter((candidate) => candidate.statusCode !== 200)) expectRefused(answer, refusal);
    expect(await sessionCount(t)).toBe(sessions + 1);
  });

  it('a signature counter that does not grow (a cloned key) is refused', async () => {
    const t = await open(PASSKEY_ENV);
    const { authenticator, refusal } = await setUp(t);
    expect((await signInAlone(t, authenticator)).statusCode).toBe(200);
    expect(authenticator.counter).toBe(1);
    for (const counter of [1, 0]) expectRefused(await signInAlone(t, authenticator, { counter }), refusal, `counter ${counter}`);
    expect((await t.services.db.selectFrom('mfa_factors').select('sign_count').executeTakeFirstOrThrow()).sign_count).toBe(1);
    expect((await signInAlone(t, authenticator)).statusCode).toBe(200);
  });

  it('a challenge older than 300 s is refused; one of 299 s signs in', async () => {
    const t = await open(PASSKEY_ENV);
    const { authenticator, refusal } = await setUp(t);
    const late = authenticator.authenticate(await passkeyOptions(t));
    const inTime = await passkeyOptions(t);
    t.clock.advance(299);
    expect((await passkeyLogin(t, authenticator.authenticate(inTime))).statusCode).toBe(200);
    t.clock.advance(2);
    expectRefused(await passkeyLogin(t, late), refusal);
  });

  it('a challenge asked for with another school_id, known or not, is refused to an admin of this school', async () => {
    const t = await open(PASSKEY_ENV);
    await seedAdmin(t.services, { schoolId: 'roosevelt-elementary', username: 'bob' });
    const { admin, authenticator, refusal } = await setUp(t);
    for (const schoolId of ['roosevelt-elementary', 'no-such-school']) {
      expectRefused(await signInAlone(t, authenticator, {}, undefined, schoolId), refusal, schoolId);
    }
    expect((await signInAlone(t, authenticator, {}, undefined, admin.schoolId)).statusCode).toBe(200);
  });

  it("another admin's user handle with this admin's credential is refused", async () => {
    const t = await open(PASSKEY_ENV);
    const { authenticator, refusal } = await setUp(t);
    const bob = await seedAdmin(t.services, { username: 'bob' });
    const carol = await seedAdmin(t.services, { schoolId: 'roosevelt-elementary', username: 'carol' });
    await adminWithDiscoverablePasskey(t, carol);
    for (const other of [bob, carol]) {
      const handle = await userHandleOf(t, other);
      expect(handle).not.toBe(authenticator.userHandle);
      expectRefused(await signInAlone(t, authenticator, { userHandle: handle }), refusal, other.username);
    }
    expect(await passkeyFailures(t)).toHaveLength(2);
  });

  it("this admin's user handle with another admin's credential is refused", async () => {
    const t = await open(PASSKEY_ENV);
    const { authenticator, refusal } = await setUp(t);
    const { authenticator: bobs } = await adminWithDiscoverablePasskey(t, await seedAdmin(t.services, { username: 'bob' }));
    expectRefused(await signInAlone(t, bobs, { userHandle: authenticator.userHandle! }), refusal);
  });

  it('an unknown credential id, or a known one with a signature of another key, is refused', async () => {
    const t = await open(PASSKEY_ENV);
    const { authenticator, refusal } = await setUp(t);
    const unknown = withCredentialId(authenticator.authenticate(await passkeyOptions(t)), randomBytes(32).toString('base64url'));
    expectRefused(await passkeyLogin(t, unknown), refusal, 'unknown id');
    // A key the service never registered, claiming to be the admin.
    const stranger = new SoftAuthenticator({ origin: ORIGIN });
    stranger.register({ rp: { id: RP_ID, name: 'x' }, user: { id: authenticator.userHandle!, name: 'x', displayName: 'x' }, challenge: 'Y2hhbGxlbmdl', pubKeyCredParams: [] });
    expectRefused(await signInAlone(t, stranger), refusal, 'stranger');
    expectRefused(await passkeyLogin(t, impostorOf(authenticator)(await passkeyOptions(t))), refusal, 'impostor');
    expect((await signInAlone(t, authenticator)).statusCode).toBe(200);
  });

  it('a disabled admin is refused, and signs in again once enabled', async () => {
    const t = await open(PASSKEY_ENV);
    const { admin, authenticator, refusal } = await setUp(t);
    await setAdminEnabled(t.services, admin, false);
    expectRefused(await signInAlone(t, authenticator), refusal);
    await setAdminEnabled(t.services, admin, true);
    expect((await signInAlone(t, authenticator)).statusCode).toBe(200);
  });

  it('an admin of a suspended school is refused, and signs in again once it resumes', async () => {
    const t = await open(PASSKEY_ENV);
    const { admin, authenticator, refusal } = await setUp(t);
    await suspendSchool(t.services, admin.schoolId);
    expectRefused(await signInAlone(t, authenticator), refusal);
    await resumeSchool(t.services, admin.schoolId);
    expect((await signInAlone(t, authenticator)).statusCode).toBe(200);
  });

  it('every refusal records login.failure with a detail starting with passkey, and starts no session', async () => {
    const t = await open(PASSKEY_ENV);
    const { admin, authenticator, refusal } = await setUp(t);
    const bob = await seedAdmin(t.services, { username: 'bob' });
    const sessions = await sessionCount(t);
    const lastEvent = await t.services.db.selectFrom('events').select('id').orderBy('id', 'desc').executeTakeFirstOrThrow();
    const options = await passkeyOptions(t);
    const answers: Record<string, LightMyRequestResponse> = {
      'another origin': await signInAlone(t, authenticator, { origin: 'https://evil.test' }),
      'unknown credential': await passkeyLogin(t, withCredentialId(authenticator.authenticate(options), randomBytes(32).toString('base64url'))),
      "another admin's user handle": await signInAlone(t, authenticator, { userHandle: await userHandleOf(t, bob) }),
    };
    await setAdminEnabled(t.services, admin, false);
    answers['disabled admin'] = await signInAlone(t, authenticator);
    await setAdminEnabled(t.services, admin, true);
    await suspendSchool(t.services, admin.schoolId);
    answers['suspended school'] = await signInAlone(t, authenticator);
    await resumeSchool(t.services, admin.schoolId);
    for (const [why, answer] of Object.entries(answers)) expectRefused(answer, refusal, why);

    const failures = await t.services.db.selectFrom('events').select('detail').where('type', '=', 'login.failure').where('id', '>', lastEvent.id).orderBy('id').execute();
    const startsWithPasskey: unknown = expect.stringMatching(/^passkey/);
    expect(failures.map((failure) => failure.detail)).toEqual(Object.keys(answers).map(() => startsWithPasskey));
    expect(await sessionCount(t)).toBe(sessions);
  });

  it('a body without a credential object is not a sign-in', async () => {
    const t = await open(PASSKEY_ENV);
    const { refusal } = await setUp(t);
    for (const body of [{}, { credential: 'abc' }, { credential: 7 }]) {
      const answer = await t.app.inject({ method: 'POST', url: '/admin/auth/passkey/login', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
      expect([401, 422], JSON.stringify(body)).toContain(answer.statusCode);
      if (answer.statusCode === 401) expectRefused(answer, refusal);
    }
    // A credential object missing its parts is a refused sign-in, never a 500.
    for (const credential of [{}, { id: 'x', response: {} }, { id: 'x', rawId: 'x', type: 'public-key', response: { clientDataJSON: 'bm90IGpzb24' } }]) {
      expectRefused(await passkeyLogin(t, credential), refusal, JSON.stringify(credential));
    }
  });
});
