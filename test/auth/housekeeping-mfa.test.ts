import { describe, expect, it } from 'vitest';
import { prune } from '../../src/auth/housekeeping.js';
import { seedAdmin, useTestApps } from '../helpers/app.js';
import { TEST_DIALECTS } from '../helpers/database.js';
import { adminWithTotp, passwordStep, passwordStepFrom, verifyFrom, wrongCode } from '../helpers/mfa.js';

describe.each(TEST_DIALECTS)('prune and mfa_tokens on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('deletes expired mfa_tokens only', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    await adminWithTotp(t, admin);
    await passwordStep(t, admin);
    t.clock.advance(200);
    await passwordStep(t, admin);
    expect((await prune(t.services, { sessionDays: 7 })).mfaChallenges).toBe(0);
    t.clock.advance(100);
    expect((await prune(t.services, { sessionDays: 7 })).mfaChallenges).toBe(1);
    expect(await t.services.db.selectFrom('mfa_challenges').select('token_hash').execute()).toHaveLength(1);
  });

  it("deletes a second-factor address counter once its window is over, never the new addresses' one", async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret } = await adminWithTotp(t, admin);
    expect((await verifyFrom(t, await passwordStepFrom(t, admin, '203.0.113.5'), wrongCode(t, secret), '203.0.113.5')).statusCode).toBe(401);
    const scopes = () => t.services.db.selectFrom('mfa_throttle').select('scope').orderBy('scope').execute();
    // The enrollment's confirmation code, 30 s earlier from inject's address, was counted too.
    expect(await scopes()).toEqual([{ scope: 'ip:127.0.0.1' }, { scope: 'ip:203.0.113.5' }, { scope: 'new' }]);
    t.clock.advance(899);
    expect((await prune(t.services, { sessionDays: 7 })).mfaThrottle).toBe(1);
    expect(await scopes()).toEqual([{ scope: 'ip:203.0.113.5' }, { scope: 'new' }]);
    t.clock.advance(1);
    expect((await prune(t.services, { sessionDays: 7 })).mfaThrottle).toBe(1);
    expect(await scopes()).toEqual([{ scope: 'new' }]);
  });
});
