import type { Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { SchoolsTable } from '../schema/schools.js';

export type School = Selectable<SchoolsTable>;

export async function insertSchool(db: Db, school: School): Promise<boolean> {
  const result = await db
    .insertInto('schools')
    .values(school)
    .onConflict((conflict) => conflict.column('key').doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

export function findSchool(db: Db, key: string): Promise<School | undefined> {
  return db.selectFrom('schools').selectAll().where('key', '=', key).executeTakeFirst();
}

export function listSchools(db: Db): Promise<School[]> {
  return db.selectFrom('schools').selectAll().orderBy('key').execute();
}

export async function setSchoolSuspended(db: Db, key: string, suspendedAt: number | null): Promise<void> {
  await db.updateTable('schools').set({ suspended_at: suspendedAt }).where('key', '=', key).execute();
}

/** Sets a school's second-factor policy; returns whether the school exists. */
export async function setSchoolMfaPolicy(db: Db, key: string, policy: string): Promise<boolean> {
  const result = await db.updateTable('schools').set({ mfa_policy: policy }).where('key', '=', key).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Sets a school's passkey sign-in policy; returns whether the school exists. */
export async function setSchoolPasskeyPolicy(db: Db, key: string, policy: string): Promise<boolean> {
  const result = await db.updateTable('schools').set({ passkey_policy: policy }).where('key', '=', key).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
