import type { Db } from '../../db/database.js';
import { findLinkOfAdmin, putSsoLink } from '../../db/queries/sso-links.js';
import { findSsoSettings } from '../../db/queries/sso-settings.js';
import { ScimError } from './scim-error.js';
import { emailKey } from '../sso/email-address.js';

/**
 * In a school with an identity provider, the directory's address becomes the admin's waiting
 * link (DESIGN.md §8): the first sign-in whose ID token has that address verified binds the IdP
 * identity. A link already bound is the directory's to leave alone: after binding only (iss, sub)
 * matches. An address linked to another admin is refused, never moved: one identity, one admin.
 */
export async function followDirectoryAddress(db: Db, admin: { id: string; school_key: string }, address: string | undefined, now: number): Promise<void> {
  if (address === undefined || (await findSsoSettings(db, admin.school_key)) === undefined) return;
  const link = await findLinkOfAdmin(db, admin.id);
  const email = emailKey(address);
  if (link !== undefined && (link.subject !== null || link.email === email)) return;
  const stored = await putSsoLink(db, { admin_id: admin.id, school_key: admin.school_key, email, issuer: null, subject: null, created_at: now, linked_at: null });
  if (!stored) throw new ScimError(409, 'uniqueness', `${address} is already linked to another administrator's single sign-on`);
}
