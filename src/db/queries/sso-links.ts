import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../database.js';
import { isUniqueViolation } from '../errors.js';
import type { SsoLinksTable } from '../schema/sso-links.js';

export type SsoLink = Selectable<SsoLinksTable>;

/** Creates or replaces an admin's link; false when the identity or email is linked to another admin. */
export async function putSsoLink(db: Db, link: Insertable<SsoLinksTable>): Promise<boolean> {
  const { admin_id: _admin, ...changes } = link;
  try {
    await db
      .insertInto('sso_links')
      .values(link)
      .onConflict((conflict) => conflict.column('admin_id').doUpdateSet(changes))
      .execute();
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

/** Deletes an admin's link in one statement and answers what it was, or undefined when there was none. */
export function deleteSsoLink(db: Db, adminId: string): Promise<SsoLink | undefined> {
  return db.deleteFrom('sso_links').where('admin_id', '=', adminId).returningAll().executeTakeFirst();
}

export function findLinkByIdentity(db: Db, issuer: string, subject: string): Promise<SsoLink | undefined> {
  return db.selectFrom('sso_links').selectAll().where('issuer', '=', issuer).where('subject', '=', subject).executeTakeFirst();
}

export function findLinkByEmail(db: Db, schoolKey: string, email: string): Promise<SsoLink | undefined> {
  return db.selectFrom('sso_links').selectAll().where('school_key', '=', schoolKey).where('email', '=', email).where('subject', 'is', null).executeTakeFirst();
}

export function findLinkOfAdmin(db: Db, adminId: string): Promise<SsoLink | undefined> {
  return db.selectFrom('sso_links').selectAll().where('admin_id', '=', adminId).executeTakeFirst();
}

/**
 * Binds a waiting email link to the IdP identity. One conditional statement: of two first
 * sign-ins at once one binds, and an identity already bound to another admin makes it fail
 * (unique index), so one identity is one admin.
 */
export async function bindEmailLink(db: Db, adminId: string, email: string, identity: { issuer: string; subject: string }, now: number): Promise<boolean> {
  try {
    const result = await db
      .updateTable('sso_links')
      .set({ issuer: identity.issuer, subject: identity.subject, email: null, linked_at: now })
      .where('admin_id', '=', adminId)
      .where('email', '=', email)
      .where('subject', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}
