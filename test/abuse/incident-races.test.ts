/**
 * An operator ends every session of an admin while logins with the old credentials are in flight
 * (verified, session not yet stored). Afterwards no session that existed or was being created may
 * work, and re-enabling revives nothing: decided in the database by the credential epoch.
 */
import { describe, expect, it, vi } from 'vitest';
import { changePassword, setAdminEnabled } from '../../src/auth/accounts/admins.js';
import { resumeSchool, suspendSchool } from '../../src/auth/accounts/schools.js';
import { revokeSessionsOfAdmin } from '../../src/auth/accounts/session-control.js';
import { advanceCredentialEpoch } from '../../src/db/queries/admins.js';
import { useTestApps, postJson, seedAdmin, signIn, type TestApp } from '../helpers/app.js';
import { BODIES, ENDPOINTS, me, refresh } from '../helpers/contract.js';
import { TEST_DIALECTS } from '../helpers/database.js';

type Seeded = Awaited<ReturnType<typeof seedAdmin>>;

/** Holds every login after its password verification until `release` is called. */
function holdLoginsAfterVerification(t: TestApp) {
  let release = () => undefined as void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let verified = () => undefined as void;
  const oneVerified = new Promise<void>((resolve) => (verified = resolve));
  const hasher = t.services.hasher;
  const verify = hasher.verify.bind(hasher);
  vi.spyOn(hasher, 'verify').mockImplementation(async (hash, password) => {
    const matches = await verify(hash, password);
    verified();
    await released;
    return matches;
  });
  return { oneVerified, release };
}

const actions: Record<string, (t: TestApp, admin: Seeded) => Promise<unknown>> = {
  'admin passwd': (t, admin) => changePassword(t.services, admin, 'a brand new passphrase 2026'),
  'admin disable, then enable': async (t, admin) => {
    await setAdminEnabled(t.services, admin, false);
    await setAdminEnabled(t.services, admin, true);
  },
  'school suspend, then resume': async (t, admin) => {
    await suspendSchool(t.services, admin.schoolId);
    await resumeSchool(t.services, admin.schoolId);
  },
  'sessions revoke --username': (t, admin) => revokeSessionsOfAdmin(t.services, admin),
};

describe.each(TEST_DIALECTS)('operator actions during logins on %s', (dialect) => {
  const open = useTestApps(dialect);

  it.each(Object.keys(actions))('%s: the in-flight login is refused and no earlier session works', async (name) => {
    const t = await open({ REFRESH_TOKEN_ROTATION: 'on' });
    const admin = await seedAdmin(t.services);
    const before = await signIn(t.app, admin);
    const hold = holdLoginsAfterVerification(t);
    const inFlight = postJson(t.app, ENDPOINTS.login, { school_id: admin.schoolId, username: admin.username, password: admin.password });
    await hold.oneVerified;
    await actions[name]!(t, admin);
    hold.release();

    const answer = await inFlight;
    expect(answer.statusCode).toBe(401);
    expect(answer.body).toBe(BODIES.loginRefused);
    expect((await refresh(t.app, before.refresh_token)).statusCode).toBe(401);
    expect((await me(t.app, before.access_token)).statusCode).toBe(401);
    const alive = await t.services.db.selectFrom('sessions').select('id').where('revoked_at', 'is', null).execute();
    expect(alive).toEqual([]);
  });

  it('a session stored at an older credential epoch neither refreshes nor passes /admin/auth/me', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const session = await signIn(t.app, admin);
    const { id } = await t.services.db.selectFrom('admins').select('id').executeTakeFirstOrThrow();
    expect((await me(t.app, session.access_token)).statusCode).toBe(200);
    // What a login that slipped past an operator's action would have left: not revoked, older epoch.
    await advanceCredentialEpoch(t.services.db, { adminId: id });
    expect((await refresh(t.app, session.refresh_token)).statusCode).toBe(401);
    expect((await me(t.app, session.access_token)).statusCode).toBe(401);
  });

  it('after disable then enable, the admin signs in again with a new session', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    await setAdminEnabled(t.services, admin, false);
    await setAdminEnabled(t.services, admin, true);
    const session = await signIn(t.app, admin);
    expect((await me(t.app, session.access_token)).statusCode).toBe(200);
  });
});
