import { describe, expect, it } from 'vitest';
import { prune } from '../../src/auth/housekeeping.js';
import { seedAdmin, useTestApps } from '../helpers/app.js';
import { TEST_DIALECTS } from '../helpers/database.js';
import { adminWithTotp, passwordStep } from '../helpers/mfa.js';

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
});
