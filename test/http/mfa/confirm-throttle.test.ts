import { describe, expect, it } from 'vitest';
import { setMfaPolicy } from '../../../src/auth/mfa/operator.js';
import { postJson, seedAdmin, signIn, useTestApps, type TestApp } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { bearer, passwordStep, totpCode, wrongCode } from '../../helpers/mfa.js';

/** An admin signed in with the password alone (aal1) who started a TOTP enrollment. */
async function pendingEnrollment(t: TestApp) {
  const admin = await seedAdmin(t.services);
  const { access_token } = await signIn(t.app, admin);
  const started = await postJson(t.app, '/admin/auth/mfa/totp', {}, bearer(access_token));
  expect(started.statusCode, started.body).toBe(200);
  const { factor_id, secret } = started.json<{ factor_id: string; secret: string }>();
  const confirm = (code: string, token = access_token) => postJson(t.app, '/admin/auth/mfa/totp/confirm', { factor_id, code }, bearer(token));
  return { admin, secret, confirm };
}

function mfaEvents(t: TestApp) {
  return t.services.db.selectFrom('events').select(['type', 'username', 'detail']).where('type', 'like', 'mfa.%').orderBy('id').execute();
}

describe.each(TEST_DIALECTS)('wrong TOTP confirmation codes with an access token on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('count against the per-admin throttle: the 11th answers 429 with Retry-After, and a right code works after the window', async () => {
    const t = await open();
    const { admin, secret, confirm } = await pendingEnrollment(t);
    for (let i = 0; i < 10; i++) {
      const wrong = await confirm(wrongCode(t, secret));
      expect(wrong.statusCode).toBe(401);
      expect(wrong.json()).toEqual({ detail: 'Invalid second factor' });
    }
    t.clock.advance(100);
    const throttled = await confirm(totpCode(t, secret));
    expect(throttled.statusCode).toBe(429);
    expect(throttled.json()).toEqual({ detail: 'Too many failed second factors. Try again later.' });
    expect(Number(throttled.headers['retry-after'])).toBe(900 - 100);

    const events = await mfaEvents(t);
    expect(events.filter((event) => event.type === 'mfa.failure')).toHaveLength(10);
    expect(events.filter((event) => event.type === 'mfa.throttled')).toHaveLength(1);
    expect(events.every((event) => event.username === 'alice')).toBe(true);
    expect(events.some((event) => event.type === 'mfa.enrolled')).toBe(false);

    t.clock.advance(800);
    // The first access token has expired by now (900 s): a fresh one, still aal1.
    const { access_token } = await signIn(t.app, admin);
    const confirmed = await confirm(totpCode(t, secret), access_token);
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect(confirmed.json<{ recovery_codes: string[] }>().recovery_codes).toHaveLength(10);
  });

  it('parallel wrong codes cannot go past the 10 of the window', async () => {
    const t = await open();
    const { secret, confirm } = await pendingEnrollment(t);
    const answers = await Promise.all(Array.from({ length: 15 }, () => confirm(wrongCode(t, secret))));
    const statuses = answers.map((answer) => answer.statusCode);
    expect(statuses.filter((status) => status === 401)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(5);
    expect((await mfaEvents(t)).filter((event) => event.type === 'mfa.failure')).toHaveLength(10);
  });

  it('share the throttle with the sign-in verification, and a right confirmation gives its reservation back', async () => {
    const t = await open();
    const { admin, secret, confirm } = await pendingEnrollment(t);
    for (let i = 0; i < 9; i++) expect((await confirm(wrongCode(t, secret))).statusCode).toBe(401);
    expect((await confirm(totpCode(t, secret))).statusCode).toBe(200);
    // 9 failures stand: one more wrong code at sign-in is allowed, the next is throttled.
    t.clock.advance(30);
    const mfaToken = await passwordStep(t, admin);
    const verify = (code: string) => postJson(t.app, '/admin/auth/mfa/verify', { mfa_token: mfaToken, method: 'totp', code });
    expect((await verify(wrongCode(t, secret))).statusCode).toBe(401);
    expect((await verify(totpCode(t, secret))).statusCode).toBe(429);
  });

  it("through an mfa_token (a required school's enrollment) also count per admin: signing in again buys no more guesses", async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    await setMfaPolicy(t.services, admin.schoolId, 'required');
    const enrollWith = async (mfaToken: string) => {
      const started = await postJson(t.app, '/admin/auth/mfa/totp', {}, bearer(mfaToken));
      expect(started.statusCode, started.body).toBe(200);
      const { factor_id, secret } = started.json<{ factor_id: string; secret: string }>();
      return { secret, confirm: (code: string) => postJson(t.app, '/admin/auth/mfa/totp/confirm', { factor_id, code }, bearer(mfaToken)) };
    };
    for (let round = 0; round < 2; round++) {
      const { secret, confirm } = await enrollWith(await passwordStep(t, admin));
      for (let i = 0; i < 5; i++) expect((await confirm(wrongCode(t, secret))).statusCode).toBe(401);
    }
    const { secret, confirm } = await enrollWith(await passwordStep(t, admin));
    const throttled = await confirm(totpCode(t, secret));
    expect(throttled.statusCode).toBe(429);
    expect(throttled.headers['retry-after']).toBe('900');
    expect((await mfaEvents(t)).filter((event) => event.type === 'mfa.failure')).toHaveLength(10);
  });
});
