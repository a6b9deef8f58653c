import type { Insertable, Selectable, Updateable } from 'kysely';
import { dialectOf, type Db } from '../database.js';
import { isUniqueViolation } from '../errors.js';
import type { AdminsTable } from '../schema/admins.js';
import { adminCondition, type AdminFilter } from './admin-filter.js';

/** What a SCIM User is made of: the admin's row, less its secrets. */
export type ScimAdminRow = Pick<
  Selectable<AdminsTable>,
  'id' | 'school_key' | 'username' | 'username_key' | 'external_id' | 'scim_profile' | 'disabled_at' | 'created_at' | 'modified_at' | 'password_hash'
>;

const COLUMNS = ['id', 'school_key', 'username', 'username_key', 'external_id', 'scim_profile', 'disabled_at', 'created_at', 'modified_at', 'password_hash'] as const;

function schoolAdmins(db: Db, schoolKey: string) {
  return db.selectFrom('admins').where('admins.school_key', '=', schoolKey).where('admins.deleted_at', 'is', null);
}

/** The school's admin `id`; `forUpdate` locks the row on PostgreSQL until the transaction ends (SQLite's writers take turns). */
export function findScimAdmin(db: Db, schoolKey: string, id: string, forUpdate = false): Promise<ScimAdminRow | undefined> {
  const query = schoolAdmins(db, schoolKey).select(COLUMNS).where('admins.id', '=', id);
  return (forUpdate && dialectOf(db) === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
}

/** One page of the school's admins matching `filter`, in creation order, and how many match in all. */
export async function listScimAdmins(db: Db, schoolKey: string, filter: AdminFilter, offset: number, limit: number): Promise<{ total: number; rows: ScimAdminRow[] }> {
  const matching = schoolAdmins(db, schoolKey).where((eb) => adminCondition(eb, filter));
  const counted = await matching.select((eb) => eb.fn.countAll<number | string>().as('total')).executeTakeFirstOrThrow();
  const total = Number(counted.total);
  if (limit === 0 || offset >= total) return { total, rows: [] };
  const rows = await matching.select(COLUMNS).orderBy('admins.created_at').orderBy('admins.id').offset(offset).limit(limit).execute();
  return { total, rows };
}

/** Every address of the admins named, by admin. */
export async function emailsOfAdmins(db: Db, adminIds: readonly string[]): Promise<Map<string, string[]>> {
  const byAdmin = new Map<string, string[]>();
  if (adminIds.length === 0) return byAdmin;
  const rows = await db.selectFrom('admin_emails').select(['admin_id', 'address']).where('admin_id', 'in', adminIds).orderBy('address').execute();
  for (const row of rows) byAdmin.set(row.admin_id, [...(byAdmin.get(row.admin_id) ?? []), row.address]);
  return byAdmin;
}

export type ScimAdminChanges = Pick<Updateable<AdminsTable>, 'username' | 'username_key' | 'external_id' | 'scim_profile' | 'modified_at'>;

/**
 * Writes what a SCIM replace or patch changed. `false` when another admin of the school already
 * has the username or external id: the unique indexes decide, whatever runs at the same time.
 */
export async function updateScimAdmin(db: Db, id: string, changes: ScimAdminChanges): Promise<boolean> {
  try {
    await db.updateTable('admins').set(changes).where('id', '=', id).where('deleted_at', 'is', null).execute();
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

/** Inserts a SCIM-created admin; `false` when the username or external id is taken in the school (any unique index). */
export async function insertScimAdmin(db: Db, admin: Insertable<AdminsTable>): Promise<boolean> {
  const result = await db.insertInto('admins').values(admin).onConflict((conflict) => conflict.doNothing()).executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

/**
 * Which of `username_key` and `external_id` another admin of the school holds, read before a write
 * so the error can say which (on PostgreSQL nothing can be read after a failed statement).
 */
export async function heldBy(db: Db, schoolKey: string, exceptId: string, held: { usernameKey: string; externalId: string | null }): Promise<'userName' | 'externalId' | undefined> {
  const others = db.selectFrom('admins').select('id').where('school_key', '=', schoolKey).where('id', '<>', exceptId);
  if ((await others.where('username_key', '=', held.usernameKey).executeTakeFirst()) !== undefined) return 'userName';
  if (held.externalId === null) return undefined;
  return (await others.where('external_id', '=', held.externalId).executeTakeFirst()) === undefined ? undefined : 'externalId';
}
