import { describe, expect, it } from 'vitest';
import { changePassword, setAdminEnabled } from '../../../src/auth/accounts/admins.js';
import { confirmTotp } from '../../../src/auth/mfa/enroll.js';
import { setMfaPolicy } from '../../../src/auth/mfa/operator.js';
import { authenticateMfaPrincipal } from '../../../src/auth/mfa/principal.js';
import { revokeSessionsOfAdmin } from '../../../src/auth/accounts/session-control.js';
import { postJson, seedAdmin, signIn as passwordSignIn, useTestApps, type TestApp } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { adminWithTotp, bearer, loginRequest, passwordStep, totpCode, verify } from '../../helpers/mfa.js';

type Seeded = Awaited<ReturnType<typeof seedAdmin>>;

/** The operator actions after which a leaked password's pending mfa_token must be worthless. */
const OPERATOR_ACTIONS: [string, (t: TestApp, admin: Seeded) => Promise<unknown>][] = [
  ['admin passwd', (t, admin) => changePassword(t.services, admin, 'an entirely new passphrase 42')],
  ['admin disable', (t, admin) => setAdminEnabled(t.services, admin, false)],
  ['sessions revoke', (t, admin) => revokeSessionsOfAdmin(t.services, admin)],
];

async function enrollmentToken(t: TestApp, admin: Seeded): Promise<string> {
  const challenge = await loginRequest(t.app, admin);
  expect(challenge.statusCode, challenge.body).toBe(403);
  return challenge.json<{ mfa_token: string }>().mfa_token;
}

async function factorsAndCodes(t: TestApp) {
  const factors = await t.services.db.selectFrom('mfa_factors').select(['id', 'confirmed_at']).execute();
  const codes = await t.services.db.selectFrom('mfa_recovery_codes').select('code_hash').execute();
  return { factors, codes };
}

describe.each(TEST_DIALECTS)('an mfa_token is bound to its credential epoch and purpose on %s', (dialect) => {
  const open = useTestApps(dialect);

  it.each(OPERATOR_ACTIONS)('after %s an enrollment mfa_token neither starts nor confirms a TOTP factor', async (_name, act) => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    await setMfaPolicy(t.services, admin.schoolId, 'required');
    const early = await enrollmentToken(t, admin);
    const started = await postJson(t.app, '/admin/auth/mfa/totp', {}, bearer(early));
    expect(started.statusCode).toBe(200);
    const { factor_id, secret } = started.json<{ factor_id: string; secret: string }>();
    const late = await enrollmentToken(t, admin);

    await act(t, admin);

    const confirm = await postJson(t.app, '/admin/auth/mfa/totp/confirm', { factor_id, code: totpCode(t, secret) }, bearer(early));
    expect(confirm.statusCode).toBe(401);
    expect(confirm.json()).toEqual({ detail: 'Invalid or expired mfa_token' });
    const restart = await postJson(t.app, '/admin/auth/mfa/totp', {}, bearer(late));
    expect(restart.statusCode).toBe(401);
    expect(restart.json()).toEqual({ detail: 'Invalid or expired mfa_token' });
    const left = await factorsAndCodes(t);
    expect(left.factors.filter((factor) => factor.confirmed_at !== null)).toEqual([]);
    expect(left.codes).toEqual([]);
  });

  it('a sign-in mfa_token is ended by an operator action before its code is checked', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret } = await adminWithTotp(t, admin);
    const mfaToken = await passwordStep(t, admin);
    await revokeSessionsOfAdmin(t.services, admin);
    const refused = await verify(t, mfaToken, totpCode(t, secret));
    expect(refused.json()).toEqual({ detail: 'Invalid or expired mfa_token' });
    // The refusal used nothing: the code still works once for a fresh sign-in.
    expect((await verify(t, await passwordStep(t, admin), totpCode(t, secret))).statusCode).toBe(200);
  });

  it('a sign-in mfa_token does not become an enrollment bearer once the last factor is removed', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret, factorId } = await adminWithTotp(t, admin);
    const signIn = await passwordStep(t, admin);
    const aal2 = (await verify(t, await passwordStep(t, admin), totpCode(t, secret))).json<{ access_token: string }>().access_token;
    const removed = await t.app.inject({ method: 'DELETE', url: `/admin/auth/mfa/${factorId}`, headers: bearer(aal2) });
    expect(removed.statusCode).toBe(204);

    const enroll = await postJson(t.app, '/admin/auth/mfa/totp', {}, bearer(signIn));
    expect(enroll.statusCode).toBe(401);
    const options = await postJson(t.app, '/admin/auth/mfa/webauthn/registration-options', {}, bearer(signIn));
    expect(options.statusCode).toBe(401);
    expect((await factorsAndCodes(t)).factors).toEqual([]);
  });

  it('an enrollment mfa_token cannot answer a sign-in', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    await setMfaPolicy(t.services, admin.schoolId, 'required');
    const token = await enrollmentToken(t, admin);
    expect((await verify(t, token, '123456')).json()).toEqual({ detail: 'Invalid or expired mfa_token' });
    const events = await t.services.db.selectFrom('events').select('type').where('type', '=', 'mfa.failure').execute();
    expect(events).toEqual([]);
  });

  it.each(OPERATOR_ACTIONS)('a TOTP confirmation whose bearer was checked before %s confirms nothing', async (_name, act) => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { access_token } = await passwordSignIn(t.app, admin);
    const started = (await postJson(t.app, '/admin/auth/mfa/totp', {}, bearer(access_token))).json<{ factor_id: string; secret: string }>();
    // The request as it stands once its bearer was checked...
    const principal = await authenticateMfaPrincipal(t.services, access_token);
    // ...then an operator acts before the code is claimed.
    await act(t, admin);
    const confirming = confirmTotp(t.services, principal, started.factor_id, totpCode(t, started.secret), { ip: '127.0.0.1', userAgent: 'test' });
    await expect(confirming).rejects.toMatchObject({ status: 401 });
    const left = await factorsAndCodes(t);
    expect(left.factors).toEqual([{ id: started.factor_id, confirmed_at: null }]);
    expect(left.codes).toEqual([]);
  });
});
