import { describe, expect, it } from 'vitest';
import { requireAdmin } from '../../../src/auth/accounts/admins.js';
import { PASSWORD_ONLY } from '../../../src/auth/keys/assurance.js';
import { setMfaPolicy } from '../../../src/auth/mfa/operator.js';
import { startSession } from '../../../src/auth/sessions/session-start.js';
import { accountOf } from '../../../src/auth/throttling/throttle-rules.js';
import { postJson, seedAdmin, signIn, useTestApps } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { adminWithTotp, passwordStep, totpCode, verify } from '../../helpers/mfa.js';

describe.each(TEST_DIALECTS)('turning a school to required on %s', (dialect) => {
  const open = useTestApps(dialect);

  it("ends its admins' password-only sessions at once and says how many; second-factor sessions and other schools keep theirs", async () => {
    const t = await open();
    const plain = await seedAdmin(t.services, { username: 'bob' });
    const enrolled = await seedAdmin(t.services, { username: 'alice' });
    const elsewhere = await seedAdmin(t.services, { schoolId: 'roosevelt-middle', username: 'carol' });
    const bob = await signIn(t.app, plain);
    const { secret, aal1 } = await adminWithTotp(t, enrolled);
    const aal2 = (await verify(t, await passwordStep(t, enrolled), totpCode(t, secret))).json<{ refresh_token: string }>();
    const carol = await signIn(t.app, elsewhere);

    const turned = await setMfaPolicy(t.services, plain.schoolId, 'required');

    const refresh = (token: string) => postJson(t.app, '/auth/refresh', { refresh_token: token });
    expect((await refresh(bob.refresh_token)).statusCode).toBe(401);
    expect((await refresh(aal1.refresh_token)).statusCode).toBe(401);
    expect((await refresh(aal2.refresh_token)).statusCode).toBe(200);
    expect((await refresh(carol.refresh_token)).statusCode).toBe(200);
    expect(turned).toEqual({ sessionsEnded: 2 });
    const reasons = await t.services.db.selectFrom('sessions').select('revoke_reason').where('revoked_at', 'is not', null).execute();
    expect(reasons).toEqual([{ revoke_reason: 'mfa_required' }, { revoke_reason: 'mfa_required' }]);
    expect(await setMfaPolicy(t.services, plain.schoolId, 'optional')).toEqual({ sessionsEnded: 0 });
  });

  it('a password login that read the policy before the change starts no session', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    // The login as it stands once it found the school optional and the password right...
    const account = await requireAdmin(t.services, admin);
    await setMfaPolicy(t.services, admin.schoolId, 'required');
    // ...reaches the session insert after the policy changed.
    const client = { account: accountOf(account.school_key, account.username_key), ip: '127.0.0.1' };
    const started = startSession(t.services, account, client, { ip: '127.0.0.1', userAgent: 'test' }, PASSWORD_ONLY);
    await expect(started).rejects.toMatchObject({ code: 'LOGIN_REFUSED' });
    expect(await t.services.db.selectFrom('sessions').select('id').execute()).toEqual([]);
  });
});
