/**
 * An operator acts while a passkey sign-in is in flight (its assertion verified, its session not
 * yet stored), or requires passkeys while a password sign-in waits for its second factor: the
 * session's insert decides, so whichever commits first wins and no session is left that the operator ended.
 */
import { describe, expect, it, vi } from 'vitest';
import { setAdminEnabled } from '../../src/auth/accounts/admins.js';
import { suspendSchool } from '../../src/auth/accounts/schools.js';
import { resetAdminMfa } from '../../src/auth/mfa/operator.js';
import { setPasskeyPolicy } from '../../src/auth/mfa/passkey-policy.js';
import * as throttle from '../../src/auth/throttling/throttle.js';
import { seedAdmin, useTestApps, type TestApp } from '../helpers/app.js';
import { passwordStep } from '../helpers/mfa.js';
import { TEST_DIALECTS } from '../helpers/database.js';
import { PASSKEY_ENV, adminWithDiscoverablePasskey, assertWith, passkeyLogin, passkeyOptions } from '../helpers/webauthn-flow.js';

vi.mock('../../src/auth/throttling/throttle.js', { spy: true });

type Seeded = Awaited<ReturnType<typeof seedAdmin>>;

/** Holds the next passkey sign-in after every check passed, just before its session starts. */
function holdPasskeySignIn() {
  let release = () => undefined as void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let checked = () => undefined as void;
  const passed = new Promise<void>((resolve) => (checked = resolve));
  const settle = vi.mocked(throttle.settlePasskeySuccess);
  const original = settle.getMockImplementation();
  settle.mockImplementationOnce(async (...args) => {
    checked();
    await released;
    return original?.(...args);
  });
  return { passed, release };
}

async function sessionCount(t: TestApp, adminId: string): Promise<number> {
  const rows = await t.services.db.selectFrom('sessions').select('id').where('admin_id', '=', adminId).where('revoked_at', 'is', null).execute();
  return rows.length;
}

const actions: Record<string, (t: TestApp, admin: Seeded) => Promise<unknown>> = {
  'admin disable, then enable': async (t, admin) => {
    await setAdminEnabled(t.services, admin, false);
    await setAdminEnabled(t.services, admin, true);
  },
  'school suspend': (t, admin) => suspendSchool(t.services, admin.schoolId),
  'admin mfa reset': (t, admin) => resetAdminMfa(t.services, admin),
  'school passkeys off': (t, admin) => setPasskeyPolicy(t.services, admin.schoolId, 'off'),
};

describe.each(TEST_DIALECTS)('operator actions during passkey sign-ins on %s', (dialect) => {
  const open = useTestApps(dialect);

  it.each(Object.keys(actions))('%s: the in-flight passkey sign-in is refused and stores no session', async (name) => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithDiscoverablePasskey(t, admin);
    const adminId = (await t.services.db.selectFrom('admins').select('id').executeTakeFirstOrThrow()).id;
    await t.services.db.updateTable('sessions').set({ revoked_at: 1 }).execute();
    const assertion = authenticator.authenticate(await passkeyOptions(t));
    const hold = holdPasskeySignIn();
    const inFlight = passkeyLogin(t, assertion);
    await hold.passed;
    await actions[name]!(t, admin);
    hold.release();

    const answer = await inFlight;
    expect(answer.statusCode, answer.body).toBe(401);
    expect(answer.json()).toEqual({ detail: 'Incorrect username or password' });
    expect(await sessionCount(t, adminId)).toBe(0);
  });

  it('without an operator, the held sign-in goes through (the hold itself refuses nothing)', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithDiscoverablePasskey(t, admin);
    const assertion = authenticator.authenticate(await passkeyOptions(t));
    const hold = holdPasskeySignIn();
    const inFlight = passkeyLogin(t, assertion);
    await hold.passed;
    hold.release();
    expect((await inFlight).statusCode).toBe(200);
  });

  it('school passkeys required after the password step: its mfa_token starts no password session', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithDiscoverablePasskey(t, admin);
    // The passkey is the admin's second factor: the right password asks for it.
    const mfaToken = await passwordStep(t, admin);
    const { sessionsEnded } = await setPasskeyPolicy(t.services, admin.schoolId, 'required');
    expect(sessionsEnded).toBe(1);
    const answer = await assertWith(t, mfaToken, authenticator);
    expect(answer.statusCode, answer.body).toBe(401);
    const adminId = (await t.services.db.selectFrom('admins').select('id').executeTakeFirstOrThrow()).id;
    expect(await sessionCount(t, adminId)).toBe(0);
    // The same passkey alone still signs in.
    expect((await passkeyLogin(t, authenticator.authenticate(await passkeyOptions(t)))).statusCode).toBe(200);
  });
});
