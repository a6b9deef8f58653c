import { sql } from 'kysely';
import type { Db } from '../database.js';

/**
 * The username key a deleted admin's row is moved to: a control character, which no username may
 * hold, so the name is free for a new account and no sign-in can reach the row.
 */
export function deletedUsernameKey(adminId: string): string {
  return `\u0001deleted:${adminId}`;
}

/**
 * Marks the admin deleted, disabled and renamed out of the way, in one conditional statement:
 * `false` when it already was (of two deletions at once, one proceeds). The row stays while its
 * ended sessions are in the revocation feed; `prune` removes it after.
 */
export async function markAdminDeleted(db: Db, adminId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('admins')
    .set({
      deleted_at: now,
      disabled_at: sql<number>`coalesce(disabled_at, ${now})`,
      username_key: deletedUsernameKey(adminId),
      external_id: null,
      scim_profile: null,
      modified_at: now,
      password_hash: '!deleted',
      credential_epoch: sql<number>`credential_epoch + 1`,
    })
    .where('id', '=', adminId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Deletes everything kept for the admin's sign-in but the row and its sessions: factors, codes,
 * passkeys, challenges, SSO link, addresses, password recovery, throttling state (`account`: the
 * throttle's key of the admin's old username) and the addresses it signed in from.
 */
export async function deleteAdminCredentials(db: Db, adminId: string, account: string): Promise<void> {
  for (const table of ['mfa_recovery_codes', 'mfa_challenges', 'mfa_factors', 'mfa_throttle', 'webauthn_registrations', 'sso_links', 'admin_emails', 'password_recoveries'] as const) {
    await db.deleteFrom(table).where('admin_id', '=', adminId).execute();
  }
  await db.deleteFrom('throttle_counters').where('account', '=', account).execute();
  await db.deleteFrom('known_client_ips').where('account', '=', account).execute();
}

/** Moves the addresses an account signed in from to its new throttle key (a renamed admin). */
export async function moveKnownAddresses(db: Db, fromAccount: string, toAccount: string): Promise<void> {
  if (fromAccount === toAccount) return;
  await db.updateTable('known_client_ips').set({ account: toAccount }).where('account', '=', fromAccount).execute();
}

/**
 * Removes the rows of deleted admins once none of their sessions is kept (the feed no longer lists
 * them) and, unless erased, no event about them either: until then an erasure request can still
 * find them by the username they had.
 */
export async function deleteDeletedAdmins(db: Db): Promise<number> {
  const result = await db
    .deleteFrom('admins')
    .where('deleted_at', 'is not', null)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('sessions').select('sessions.id').whereRef('sessions.admin_id', '=', 'admins.id'))))
    .where((eb) => eb.or([eb('erased_at', 'is not', null), eb.not(eb.exists(eb.selectFrom('events').select('events.id').whereRef('events.admin_id', '=', 'admins.id')))]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The school's deleted admins whose data is not erased yet (their usernames are kept until then). */
export function deletedAdmins(db: Db, schoolKey: string) {
  return db
    .selectFrom('admins')
    .select(['id', 'school_key', 'username', 'username_key'])
    .where('school_key', '=', schoolKey)
    .where('deleted_at', 'is not', null)
    .where('erased_at', 'is', null)
    .execute();
}
