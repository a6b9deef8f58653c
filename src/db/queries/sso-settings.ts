import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { SsoSettingsTable } from '../schema/sso-settings.js';

export type SsoSettingsRow = Selectable<SsoSettingsTable>;

export function findSsoSettings(db: Db, schoolKey: string): Promise<SsoSettingsRow | undefined> {
  return db.selectFrom('sso_settings').selectAll().where('school_key', '=', schoolKey).executeTakeFirst();
}

export function listSsoSettings(db: Db): Promise<SsoSettingsRow[]> {
  return db.selectFrom('sso_settings').selectAll().orderBy('school_key').execute();
}

/** Creates or replaces a school's settings in one statement. */
export async function upsertSsoSettings(db: Db, row: Insertable<SsoSettingsTable>): Promise<void> {
  const { school_key: _key, ...changes } = row;
  await db
    .insertInto('sso_settings')
    .values(row)
    .onConflict((conflict) => conflict.column('school_key').doUpdateSet(changes))
    .execute();
}

/** Deletes a school's settings in one statement and answers the issuer they named, or undefined. */
export async function deleteSsoSettings(db: Db, schoolKey: string): Promise<string | undefined> {
  const deleted = await db.deleteFrom('sso_settings').where('school_key', '=', schoolKey).returning('issuer').executeTakeFirst();
  return deleted?.issuer;
}

/** True when the school's admins may not sign in with a password (one primary-key look-up). */
export async function isPasswordLoginOff(db: Db, schoolKey: string): Promise<boolean> {
  if (schoolKey.includes('\0')) return false;
  const row = await db.selectFrom('sso_settings').select('password_login').where('school_key', '=', schoolKey).executeTakeFirst();
  return row !== undefined && row.password_login === 0;
}

/** Replaces a plaintext secret by its sealed form, only if it is still the one that was read. */
export async function replaceClientSecret(db: Db, schoolKey: string, stored: string, sealed: string): Promise<boolean> {
  const result = await db
    .updateTable('sso_settings')
    .set({ client_secret: sealed })
    .where('school_key', '=', schoolKey)
    .where('client_secret', '=', stored)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
