import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { seedAdmin, useTestApps, type TestApp } from '../../helpers/app.js';
import { THROTTLED_BODY } from '../../helpers/abuse-login.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { postFrom } from '../../helpers/mfa.js';
import type { SoftAuthenticator } from '../../helpers/soft-authenticator.js';
import {
  LOGIN_REFUSAL, PASSKEY_ENV, adminWithDiscoverablePasskey, impostorOf, passkeyLogin, passkeyOptions, refusalOf, signInAlone, withCredentialId,
} from '../../helpers/webauthn-flow.js';

/** Where the admin signed in from (adminWithDiscoverablePasskey's password sign-in): a known address. */
const KNOWN = '127.0.0.1';
const ELSEWHERE = '198.51.100.77';

/** A passkey sign-in naming a credential id the service never registered, from `ip`. */
async function unknownCredentialFrom(t: TestApp, authenticator: SoftAuthenticator, ip: string): Promise<LightMyRequestResponse> {
  return passkeyLogin(t, withCredentialId(authenticator.authenticate(await passkeyOptions(t)), randomBytes(32).toString('base64url')), ip);
}

/** A wrong password for an account nobody has, from `ip`. */
function wrongPasswordFrom(t: TestApp, ip: string, n: number): Promise<LightMyRequestResponse> {
  return postFrom(t, '/admin/auth/login', { school_id: 'lincoln-high', username: `nobody-${n}`, password: 'not the password' }, ip);
}

function expectThrottled(answer: LightMyRequestResponse, why: string): number {
  expect({ why, status: answer.statusCode, body: answer.body }).toEqual({ why, status: 429, body: THROTTLED_BODY });
  const retryAfter = Number(answer.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1, `${why}: Retry-After ${String(answer.headers['retry-after'])}`).toBe(true);
  return retryAfter;
}

async function adminWithKey(t: TestApp) {
  const admin = await seedAdmin(t.services);
  const { authenticator } = await adminWithDiscoverablePasskey(t, admin);
  return { admin, authenticator };
}

describe.each(TEST_DIALECTS)('passkey-alone sign-in throttling on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('20 failed passkey sign-ins from an address throttle it for the window, passkeys and passwords alike', async () => {
    const t = await open(PASSKEY_ENV);
    const { authenticator } = await adminWithKey(t);
    for (let i = 0; i < 20; i++) expect(refusalOf(await unknownCredentialFrom(t, authenticator, ELSEWHERE)), `failure ${i + 1}`).toEqual(LOGIN_REFUSAL);

    const passkey = expectThrottled(await signInAlone(t, authenticator, {}, ELSEWHERE), "the admin's passkey from a new address");
    const password = expectThrottled(await wrongPasswordFrom(t, ELSEWHERE, 0), 'a password from the same address');
    expect(passkey).toBe(password);
    expect(passkey).toBeLessThanOrEqual(300);
    // The admin's own address is spared; the window's end frees the other one.
    expect((await signInAlone(t, authenticator, {}, KNOWN)).statusCode).toBe(200);
    t.clock.advance(passkey);
    const later = await signInAlone(t, authenticator, {}, ELSEWHERE);
    expect(later.statusCode, later.body).toBe(200);
  });

  it('password failures and passkey failures add up in one per-address counter', async () => {
    const t = await open(PASSKEY_ENV);
    const { authenticator } = await adminWithKey(t);
    for (let i = 0; i < 10; i++) expect((await wrongPasswordFrom(t, ELSEWHERE, i)).statusCode, `password ${i + 1}`).toBe(401);
    for (let i = 0; i < 10; i++) expect(refusalOf(await unknownCredentialFrom(t, authenticator, ELSEWHERE)), `passkey ${i + 1}`).toEqual(LOGIN_REFUSAL);
    expectThrottled(await wrongPasswordFrom(t, ELSEWHERE, 10), 'the 21st attempt, a password');
    expectThrottled(await unknownCredentialFrom(t, authenticator, ELSEWHERE), 'the 21st attempt, a passkey');
    expectThrottled(await signInAlone(t, authenticator, {}, ELSEWHERE), "the admin's right passkey");
  });

  it('19 failures leave the 20th attempt in: the admin signs in, and the address is then known to them', async () => {
    const t = await open(PASSKEY_ENV);
    const { authenticator } = await adminWithKey(t);
    for (let i = 0; i < 10; i++) expect((await wrongPasswordFrom(t, ELSEWHERE, i)).statusCode).toBe(401);
    for (let i = 0; i < 9; i++) expect((await unknownCredentialFrom(t, authenticator, ELSEWHERE)).statusCode).toBe(401);
    const signedIn = await signInAlone(t, authenticator, {}, ELSEWHERE);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    // The success is no failure: one more failure reaches the 20.
    expect((await unknownCredentialFrom(t, authenticator, ELSEWHERE)).statusCode).toBe(401);
    expectThrottled(await wrongPasswordFrom(t, ELSEWHERE, 99), 'a password after 20 failures');
    // ...but the admin signed in from there: that layer spares them now.
    expect((await signInAlone(t, authenticator, {}, ELSEWHERE)).statusCode).toBe(200);
  });

  it("other people's failures at an address the admin signed in from never block the admin there", async () => {
    const t = await open(PASSKEY_ENV);
    const { authenticator } = await adminWithKey(t);
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await unknownCredentialFrom(t, authenticator, KNOWN)).statusCode);
    expect(statuses.slice(0, 20)).toEqual(new Array(20).fill(401));
    expect(statuses.slice(20)).toEqual(new Array(10).fill(429));
    const signedIn = await signInAlone(t, authenticator, {}, KNOWN);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
  });

  it('an address where the admin signed in alone with the passkey becomes known too', async () => {
    const t = await open(PASSKEY_ENV);
    const { authenticator } = await adminWithKey(t);
    expect((await signInAlone(t, authenticator, {}, ELSEWHERE)).statusCode).toBe(200);
    for (let i = 0; i < 20; i++) expect((await unknownCredentialFrom(t, authenticator, ELSEWHERE)).statusCode).toBe(401);
    expectThrottled(await unknownCredentialFrom(t, authenticator, ELSEWHERE), 'a stranger at that address');
    expect((await signInAlone(t, authenticator, {}, ELSEWHERE)).statusCode).toBe(200);
  });

  it('5 failures with one credential from one address, then backoff there with Retry-After; other credentials and addresses are not slowed', async () => {
    const t = await open(PASSKEY_ENV);
    const { authenticator } = await adminWithKey(t);
    const impostor = impostorOf(authenticator);
    const attacker = '203.0.113.9';
    // Failures with other credential ids do not slow this credential at that address.
    for (let i = 0; i < 5; i++) expect((await unknownCredentialFrom(t, authenticator, '203.0.113.8')).statusCode).toBe(401);
    expect((await signInAlone(t, authenticator, {}, '203.0.113.8')).statusCode).toBe(200);

    for (let i = 0; i < 5; i++) expect(refusalOf(await passkeyLogin(t, impostor(await passkeyOptions(t)), attacker)), `failure ${i + 1}`).toEqual(LOGIN_REFUSAL);
    const wait = expectThrottled(await signInAlone(t, authenticator, {}, attacker), 'the sixth attempt with this credential there');
    expect((await signInAlone(t, authenticator, {}, '203.0.113.10')).statusCode).toBe(200);
    t.clock.advance(wait);
    const after = await signInAlone(t, authenticator, {}, attacker);
    expect(after.statusCode, after.body).toBe(200);
  });

  it("an attacker elsewhere with the admin's credential id never blocks the admin where they signed in before", async () => {
    const t = await open(PASSKEY_ENV);
    const { admin, authenticator } = await adminWithKey(t);
    const impostor = impostorOf(authenticator);
    const attempts: number[] = [];
    for (let i = 0; i < 30; i++) attempts.push((await passkeyLogin(t, impostor(await passkeyOptions(t)), '203.0.113.66')).statusCode);
    for (let n = 0; n < 60; n++) attempts.push((await passkeyLogin(t, impostor(await passkeyOptions(t)), `192.0.2.${n + 1}`)).statusCode);
    expect(attempts.slice(0, 5)).toEqual(new Array(5).fill(401));
    expect(attempts.every((status) => status === 401 || status === 429)).toBe(true);
    expect(attempts.filter((status) => status === 429).length).toBeGreaterThan(0);

    const signedIn = await signInAlone(t, authenticator, {}, KNOWN);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    // The password way from there too.
    const password = await postFrom(t, '/admin/auth/login', { school_id: admin.schoolId, username: admin.username, password: admin.password }, KNOWN);
    expect(password.json()).toMatchObject({ detail: 'Second factor required' });
  });
});
