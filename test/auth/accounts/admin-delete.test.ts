import { describe, expect, it } from 'vitest';
import { deleteAdmin } from '../../../src/auth/accounts/admin-delete.js';
import { eraseAdmin } from '../../../src/auth/accounts/admin-erase.js';
import { setAdminEmail } from '../../../src/auth/accounts/admin-email.js';
import { findAdminForLogin } from '../../../src/db/queries/admins.js';
import { CLI_CONTEXT } from '../../../src/auth/events.js';
import { prune } from '../../../src/auth/housekeeping.js';
import { canonicalKey } from '../../../src/auth/identity.js';
import { accountOf } from '../../../src/auth/throttling/throttle-rules.js';
import { PASSWORD, postJson, seedAdmin, useTestApps, type TestApp } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { adminWithTotp } from '../../helpers/mfa.js';

/** Every row of the per-admin tables that names the admin (or its throttle account). */
async function rowsOf(t: TestApp, adminId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ['mfa_factors', 'mfa_recovery_codes', 'mfa_challenges', 'mfa_throttle', 'webauthn_registrations', 'sso_links', 'admin_emails', 'password_recoveries'] as const) {
    const rows = await t.services.db.selectFrom(table).select('admin_id').where('admin_id', '=', adminId).execute();
    counts[table] = rows.length;
  }
  return counts;
}

describe.each(TEST_DIALECTS)('deleting an admin (%s)', (dialect) => {
  const open = useTestApps(dialect);

  async function aliceWithEverything(t: TestApp) {
    const alice = await seedAdmin(t.services);
    await adminWithTotp(t, alice);
    await setAdminEmail(t.services, alice, 'alice@district.example');
    // A wrong password leaves throttling state; a right one a known address.
    await postJson(t.app, '/admin/auth/login', { school_id: alice.schoolId, username: alice.username, password: 'wrong password!' });
    const admin = await findAdminForLogin(t.services.db, alice.schoolId, canonicalKey(alice.username));
    if (admin === undefined) throw new Error('alice was seeded');
    return { alice, admin };
  }

  it('removes everything the admin signed in with, frees the name, and keeps the row only while the feed lists its sessions', async () => {
    const t = await open();
    const { alice, admin } = await aliceWithEverything(t);
    const before = await rowsOf(t, admin.id);
    expect(before.mfa_factors).toBeGreaterThan(0);
    expect(before.mfa_recovery_codes).toBeGreaterThan(0);
    expect(before.admin_emails).toBe(1);
    // The per-address counter (all accounts) stays: it is the address's, not the admin's.
    const account = accountOf(admin.school_key, admin.username_key);
    const counters = () => t.services.db.selectFrom('throttle_counters').select('key').where('account', '=', account).execute();
    const addresses = () => t.services.db.selectFrom('known_client_ips').select('ip').execute();
    expect((await counters()).length).toBeGreaterThan(0);
    expect((await addresses()).length).toBeGreaterThan(0);

    expect(await deleteAdmin(t.services, admin, CLI_CONTEXT, 'by test')).toBe(true);
    expect(await deleteAdmin(t.services, admin, CLI_CONTEXT, 'by test')).toBe(false);

    expect(Object.values(await rowsOf(t, admin.id)).every((count) => count === 0)).toBe(true);
    expect(await counters()).toEqual([]);
    expect(await addresses()).toEqual([]);
    expect(await findAdminForLogin(t.services.db, alice.schoolId, canonicalKey(alice.username))).toBeUndefined();
    const live = await t.services.db.selectFrom('sessions').select('id').where('admin_id', '=', admin.id).where('revoked_at', 'is', null).execute();
    expect(live).toEqual([]);
    const event = await t.services.db.selectFrom('events').select(['username', 'detail']).where('type', '=', 'admin.deleted').executeTakeFirstOrThrow();
    expect(event).toEqual({ username: 'alice', detail: expect.stringMatching(/^by test; \d+ sessions ended$/) as unknown });

    // The name is free again: a new admin, with a new id, signs in with it.
    const again = await seedAdmin(t.services, { password: `${PASSWORD}!` });
    expect((await findAdminForLogin(t.services.db, again.schoolId, canonicalKey('alice')))?.id).not.toBe(admin.id);

    // Within the feed's window the row stays; past it, while events about the admin remain, it stays
    // too (a later erasure request finds them by the name they had); once erased, it goes.
    const row = () => t.services.db.selectFrom('admins').select('id').where('id', '=', admin.id).execute();
    await prune(t.services, { sessionDays: 0 });
    expect(await row()).toHaveLength(1);
    t.clock.advance(t.services.config.accessTokenTtl + 120);
    expect((await prune(t.services, { sessionDays: 0 })).deletedAdmins).toBe(0);
    expect(await row()).toHaveLength(1);
    await eraseAdmin(t.services, { ...admin, deleted: true }, CLI_CONTEXT, 'by test');
    expect((await prune(t.services, { sessionDays: 0 })).deletedAdmins).toBe(1);
    expect(await row()).toEqual([]);
  });
});
