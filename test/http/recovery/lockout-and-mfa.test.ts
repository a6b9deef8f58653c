/** What a recovery changes besides the password: a login lockout is lifted; a second factor is not. */
import { describe, expect, it } from 'vitest';
import { PASSWORD } from '../../helpers/app.js';
import { me, refresh } from '../../helpers/contract.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { adminWithTotp, passwordStep, totpCode, verify } from '../../helpers/mfa.js';
import { NEW_PASSWORD, adminWithAddress, forgot, latestCode, login, reset, useRecoveryApps } from './recovery-world.js';

describe.each(TEST_DIALECTS)('password recovery and the other locks on %s', (dialect) => {
  const open = useRecoveryApps(dialect);

  it('lifts the lockout of the account: the new password signs in at once', async () => {
    const t = await open({ LOCKOUT_FAILURES: '3' });
    const alice = await adminWithAddress(t, 'alice', 'alice@lincoln-high.example');
    for (let failure = 1; failure <= 3; failure += 1) {
      expect((await login(t, alice, `wrong password ${failure}`, `192.0.2.${failure}`)).statusCode).toBe(401);
    }
    // Locked: even the right password, from a new address, is refused.
    const locked = await login(t, alice, PASSWORD, '192.0.2.50');
    expect(locked.statusCode).toBe(429);
    const lockedEvents = await t.services.db.selectFrom('events').select('type').where('type', '=', 'account.locked').execute();
    expect(lockedEvents).toHaveLength(1);

    // A locked account can still be mailed a code.
    expect((await forgot(t, alice, '192.0.2.60')).statusCode).toBe(202);
    expect((await reset(t, alice, await latestCode(t), NEW_PASSWORD, '192.0.2.60')).statusCode).toBe(204);
    expect((await login(t, alice, NEW_PASSWORD, '192.0.2.50')).statusCode).toBe(200);
    expect((await login(t, alice, PASSWORD, '192.0.2.51')).statusCode).toBe(401);
  });

  it('keeps the second factor: the new password alone answers 403 "Second factor required", then TOTP signs in', async () => {
    const t = await open();
    const alice = await adminWithAddress(t, 'alice', 'alice@lincoln-high.example');
    const { secret, aal1 } = await adminWithTotp(t, alice);
    // Someone with the old password got as far as the second factor before the recovery.
    const pending = await passwordStep(t, alice);

    expect((await forgot(t, alice)).statusCode).toBe(202);
    expect((await reset(t, alice, await latestCode(t))).statusCode).toBe(204);
    // The session the admin had is over.
    expect((await refresh(t.app, aal1.refresh_token)).statusCode).toBe(401);
    expect((await me(t.app, aal1.access_token)).statusCode).toBe(401);
    // So is the sign-in begun with the old password: its mfa_token no longer takes a code.
    expect((await verify(t, pending, totpCode(t, secret))).statusCode).toBe(401);
    t.clock.advance(30);

    const step = await login(t, alice, NEW_PASSWORD);
    expect(step.statusCode, step.body).toBe(403);
    const body = step.json<Record<string, unknown>>();
    expect(body.detail).toBe('Second factor required');
    expect(body).not.toHaveProperty('access_token');
    expect(body).not.toHaveProperty('refresh_token');
    expect(typeof body.mfa_token).toBe('string');

    const verified = await verify(t, String(body.mfa_token), totpCode(t, secret));
    expect(verified.statusCode, verified.body).toBe(200);
    const tokens = verified.json<{ access_token: string }>();
    expect((await me(t.app, tokens.access_token)).json()).toMatchObject({ username: 'alice', acr: 'aal2' });
    expect((await login(t, alice, PASSWORD)).statusCode).toBe(401);
  });
});
