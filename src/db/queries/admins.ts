import { sql, type Insertable, type Selectable } from 'kysely';
import { dialectOf, type Db } from '../database.js';
import type { AdminsTable } from '../schema/admins.js';
import { isStorableText } from '../text.js';

type Admin = Selectable<AdminsTable>;

/** An admin with what login needs to know about the school, in one query. */
export interface AdminForLogin extends Admin {
  school_id: string;
  school_suspended_at: number | null;
  /** The policy as read; the session's insert decides again (insertSession). */
  school_mfa_policy: string;
  /** Read for the password step; the session's insert decides again (insertSession). */
  school_passkey_policy: string;
}

/** Admins with what sign-in needs to know about their school. */
function selectAdminsWithSchool(db: Db) {
  return db
    .selectFrom('admins')
    .innerJoin('schools', 'schools.key', 'admins.school_key')
    .selectAll('admins')
    .select(['schools.school_id', 'schools.suspended_at as school_suspended_at', 'schools.mfa_policy as school_mfa_policy', 'schools.passkey_policy as school_passkey_policy']);
}

export async function findAdminForLogin(db: Db, schoolKey: string, usernameKey: string): Promise<AdminForLogin | undefined> {
  // The login body is the original contract's: its strings pass the HTTP boundary as they are.
  // No account has NUL or a lone surrogate in its names (identifiers are stored text), so such a
  // name is simply unknown, on both databases.
  if (!isStorableText(schoolKey) || !isStorableText(usernameKey)) return undefined;
  return selectAdminsWithSchool(db)
    .where('admins.school_key', '=', schoolKey)
    .where('admins.username_key', '=', usernameKey)
    .executeTakeFirst();
}

/** The admin behind an access token's `sub`, with the same school columns as for login. */
export function findAdminById(db: Db, adminId: string): Promise<AdminForLogin | undefined> {
  return selectAdminsWithSchool(db)
    .where('admins.id', '=', adminId)
    .executeTakeFirst();
}

export async function insertAdmin(db: Db, admin: Insertable<AdminsTable>): Promise<boolean> {
  const result = await db
    .insertInto('admins')
    .values(admin)
    .onConflict((conflict) => conflict.columns(['school_key', 'username_key']).doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

export function listAdmins(db: Db, schoolKey?: string): Promise<(Admin & { school_id: string })[]> {
  let query = db
    .selectFrom('admins')
    .innerJoin('schools', 'schools.key', 'admins.school_key')
    .selectAll('admins')
    .select('schools.school_id')
    .where('admins.deleted_at', 'is', null)
    .orderBy('admins.school_key')
    .orderBy('admins.username_key');
  if (schoolKey !== undefined) query = query.where('admins.school_key', '=', schoolKey);
  return query.execute();
}

/** A new password; it also moves the credential epoch on, so no session of the old one survives. */
export async function updatePasswordHash(db: Db, adminId: string, hash: string, changedAt: number): Promise<void> {
  await db
    .updateTable('admins')
    .set({ password_hash: hash, password_changed_at: changedAt, credential_epoch: sql<number>`credential_epoch + 1` })
    .where('id', '=', adminId)
    .execute();
}

/**
 * Sets a recovered password only while the admin is enabled and their school not suspended,
 * decided in the caller's transaction: an operator's disable or suspend that commits first wins.
 */
export async function updatePasswordHashIfActive(db: Db, adminId: string, hash: string, changedAt: number): Promise<boolean> {
  // PostgreSQL: an update that waited for the admin's row, locked by a suspension, would still read
  // the school as its statement began; the school's row, locked first, is read as committed.
  if (dialectOf(db) === 'postgres') {
    const active = await db
      .selectFrom('schools')
      .select('key')
      .where('key', '=', (eb) => eb.selectFrom('admins').select('school_key').where('id', '=', adminId))
      .where('suspended_at', 'is', null)
      .forShare()
      .executeTakeFirst();
    if (active === undefined) return false;
  }
  const result = await db
    .updateTable('admins')
    .set({ password_hash: hash, password_changed_at: changedAt })
    .where('id', '=', adminId)
    .where('disabled_at', 'is', null)
    .where('school_key', 'not in', (eb) => eb.selectFrom('schools').select('key').where('suspended_at', 'is not', null))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Ends, for good, every session that exists or is being created for the admins in scope. */
export async function advanceCredentialEpoch(db: Db, scope: { adminId: string } | { schoolKey: string }): Promise<void> {
  await db
    .updateTable('admins')
    .set({ credential_epoch: sql<number>`credential_epoch + 1` })
    .where((eb) => ('adminId' in scope ? eb('id', '=', scope.adminId) : eb('school_key', '=', scope.schoolKey)))
    .execute();
}

/** Rehash on login: only replaces the hash that was verified, so a concurrent password change wins. */
export async function replacePasswordHash(db: Db, adminId: string, oldHash: string, newHash: string): Promise<void> {
  await db
    .updateTable('admins')
    .set({ password_hash: newHash })
    .where('id', '=', adminId)
    .where('password_hash', '=', oldHash)
    .execute();
}

/** Disables (at `now`) or enables the admin; either is a change SCIM's `meta.lastModified` shows. */
export async function setAdminDisabled(db: Db, adminId: string, disabled: boolean, now: number): Promise<void> {
  await db.updateTable('admins').set({ disabled_at: disabled ? now : null, modified_at: now }).where('id', '=', adminId).execute();
}

/** Every stored password hash (PHC strings): their parameters decide the dummy hash's. */
export async function listPasswordHashes(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('admins').select('password_hash').execute();
  return rows.map((row) => row.password_hash);
}
