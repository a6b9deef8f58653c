import { describe, expect, it } from 'vitest';
import { resetAdminMfa } from '../../../src/auth/mfa/operator.js';
import { seedAdmin, signIn, useTestApps } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { adminWithTotp, bearer, loginRequest, passwordStep, passwordStepFrom, totpCode, verify, verifyFrom, wrongCode } from '../../helpers/mfa.js';

/** An address the admin never signed in from (adminWithTotp signs in from inject's 127.0.0.1). */
const ELSEWHERE = '203.0.113.9';

describe.each(TEST_DIALECTS)('second-factor throttling on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('10 failures in 15 minutes answer 429 with Retry-After for the rest of the window, across mfa_tokens', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret } = await adminWithTotp(t, admin);
    for (let round = 0; round < 2; round++) {
      const mfaToken = await passwordStep(t, admin);
      for (let i = 0; i < 5; i++) expect((await verify(t, mfaToken, wrongCode(t, secret))).statusCode).toBe(401);
    }
    t.clock.advance(100);
    const throttled = await verify(t, await passwordStep(t, admin), totpCode(t, secret));
    expect(throttled.statusCode).toBe(429);
    expect(throttled.json()).toEqual({ detail: 'Too many failed second factors. Try again later.' });
    // The window starts at the first failure, not at the enrollment's right confirmation code
    // (itself a second-factor attempt, 30 s earlier: adminWithTotp moves the clock on by a step).
    expect(Number(throttled.headers['retry-after'])).toBe(900 - 100);
    t.clock.advance(799);
    expect((await verify(t, await passwordStep(t, admin), totpCode(t, secret))).statusCode).toBe(429);
    t.clock.advance(1);
    expect((await verify(t, await passwordStep(t, admin), totpCode(t, secret))).statusCode).toBe(200);
  });

  it('parallel wrong codes cannot go past the 10 of the window', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret } = await adminWithTotp(t, admin);
    const tokens = [await passwordStep(t, admin), await passwordStep(t, admin), await passwordStep(t, admin)];
    const answers = await Promise.all(tokens.flatMap((token) => Array.from({ length: 5 }, () => verify(t, token, wrongCode(t, secret)))));
    const statuses = answers.map((answer) => answer.statusCode);
    expect(statuses.filter((status) => status === 401)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(5);
  });

  it('100 consecutive failures from addresses new to the admin lock the second factor there until an operator resets it', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret, aal1 } = await adminWithTotp(t, admin);
    for (let round = 0; round < 10; round++) {
      for (let token = 0; token < 2; token++) {
        const mfaToken = await passwordStepFrom(t, admin, ELSEWHERE);
        for (let i = 0; i < 5; i++) expect((await verifyFrom(t, mfaToken, wrongCode(t, secret), ELSEWHERE)).statusCode).toBe(401);
      }
      t.clock.advance(900);
    }
    const locked = await verifyFrom(t, await passwordStepFrom(t, admin, ELSEWHERE), totpCode(t, secret), ELSEWHERE);
    expect(locked.statusCode).toBe(403);
    expect(locked.json()).toEqual({ detail: 'Second factor locked; an operator must reset it' });
    t.clock.advance(86_400);
    expect((await verifyFrom(t, await passwordStepFrom(t, admin, ELSEWHERE), totpCode(t, secret), ELSEWHERE)).statusCode).toBe(403);
    const events = await t.services.db.selectFrom('events').select('type').where('type', 'like', 'mfa.%').execute();
    expect(events.filter((event) => event.type === 'mfa.locked')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'mfa.failure')).toHaveLength(100);

    expect(await resetAdminMfa(t.services, admin)).toEqual({ factors: 1, sessions: 1 });
    const me = await t.app.inject({ method: 'GET', url: '/admin/auth/me', headers: bearer(aal1.access_token) });
    expect(me.statusCode).toBe(401);
    // No factor left: the admin signs in with the password alone, and may enroll again.
    const signedIn = await signIn(t.app, admin);
    expect(signedIn.access_token).toBeTypeOf('string');
    expect((await loginRequest(t.app, admin)).statusCode).toBe(200);
  });
});
