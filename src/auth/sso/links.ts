import { randomUUID } from 'node:crypto';
import { nowSeconds } from '../../runtime/clock.js';
import { insertAdmin } from '../../db/queries/admins.js';
import { deleteSsoLink, findLinkOfAdmin, putSsoLink, type SsoLink } from '../../db/queries/sso-links.js';
import { findSsoSettings } from '../../db/queries/sso-settings.js';
import { inTransaction } from '../../db/database.js';
import { UsageError } from '../../errors.js';
import { CLI_CONTEXT, aboutAdmin, recordEvent } from '../events.js';
import { endSessions } from '../sessions/end-sessions.js';
import type { AppContext } from '../context.js';
import { MAX_USERNAME_LENGTH, requireAdmin, type AdminRef } from '../accounts/admins.js';
import { canonicalKey } from '../identity.js';
import { checkIdentifier, requireSchool } from '../accounts/schools.js';
import { emailKey } from './email-address.js';

/**
 * The password hash of an admin who signs in only through SSO: not a PHC string, so no password
 * ever verifies against it.
 */
export const SSO_ONLY_PASSWORD_HASH = '!sso-only';

export type LinkTarget = { readonly email: string } | { readonly subject: string };

type Deps = Pick<AppContext, 'db' | 'clock'>;

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,253}$/;

function emailOf(raw: string): string {
  const email = emailKey(raw.trim());
  if (!EMAIL.test(email)) throw new UsageError(`--email: ${JSON.stringify(raw)} is not an email address`);
  return email;
}

async function requireSsoIssuer(deps: Deps, schoolKey: string, schoolId: string): Promise<string> {
  const settings = await findSsoSettings(deps.db, schoolKey);
  if (settings === undefined) throw new UsageError(`school ${JSON.stringify(schoolId)} has no single sign-on; set it first with: school-auth sso set ${schoolId} ...`);
  return settings.issuer;
}

/** The identity a link binds, or undefined while it waits for its first sign-in. */
function boundIdentity(link: SsoLink | undefined): { ssoIssuer: string; subject: string } | undefined {
  if (link === undefined || link.issuer === null || link.subject === null) return undefined;
  return { ssoIssuer: link.issuer, subject: link.subject };
}

function describeLink(link: Pick<SsoLink, 'email' | 'issuer' | 'subject'>): string {
  return link.subject === null ? `email ${link.email ?? ''} (binds at first verified sign-in)` : `subject ${link.subject} at ${link.issuer ?? ''}`;
}

/**
 * Links an admin to an IdP identity: by email (bound to `(iss, sub)` at the first sign-in whose
 * ID token has that email verified) or by subject (bound now, to the school's issuer). Replaces a
 * previous link of the admin, ending the sessions its identity signed in. Refused when the
 * identity or email is another admin's.
 */
export async function linkAdmin(deps: Deps, ref: AdminRef, target: LinkTarget): Promise<void> {
  const admin = await requireAdmin(deps, ref);
  const issuer = await requireSsoIssuer(deps, admin.school_key, admin.school_id);
  const now = nowSeconds(deps.clock);
  const link =
    'email' in target
      ? { email: emailOf(target.email), issuer: null, subject: null, linked_at: null }
      : { email: null, issuer, subject: target.subject, linked_at: now };
  if ('subject' in target && (target.subject === '' || target.subject.length > 255)) throw new UsageError('--subject: 1 to 255 characters');
  await inTransaction(deps.db, async (trx) => {
    const previous = await findLinkOfAdmin(trx, admin.id);
    const stored = await putSsoLink(trx, { admin_id: admin.id, school_key: admin.school_key, created_at: now, ...link });
    if (!stored) throw new UsageError('that identity (or email) is already linked to another administrator: one identity, one admin');
    const audit = { context: CLI_CONTEXT, type: 'sso.linked', about: aboutAdmin(admin) } as const;
    const replaced = previous?.issuer === link.issuer && previous.subject === link.subject ? undefined : boundIdentity(previous);
    if (replaced === undefined) return recordEvent(trx, deps.clock, audit.context, { type: audit.type, ...audit.about, detail: describeLink(link) });
    const detail = (count: number) => `${describeLink(link)}; ${count} sessions ended`;
    await endSessions({ ...deps, db: trx }, { scope: replaced, reason: 'sso_unlinked', audit: { ...audit, always: true, detail } });
  });
}

/** Removes an admin's link and ends, in the same transaction, every session its identity signed in. */
export async function unlinkAdmin(deps: Deps, ref: AdminRef): Promise<void> {
  const admin = await requireAdmin(deps, ref);
  await inTransaction(deps.db, async (trx) => {
    const removed = await deleteSsoLink(trx, admin.id);
    if (removed === undefined) throw new UsageError(`admin ${JSON.stringify(admin.username)} has no single sign-on link`);
    const audit = { context: CLI_CONTEXT, type: 'sso.unlinked', about: aboutAdmin(admin), always: true } as const;
    const identity = boundIdentity(removed);
    if (identity === undefined) return recordEvent(trx, deps.clock, audit.context, { type: audit.type, ...audit.about, detail: `${describeLink(removed)}; 0 sessions ended` });
    const detail = (count: number) => `${describeLink(removed)}; ${count} sessions ended`;
    await endSessions({ ...deps, db: trx }, { scope: identity, reason: 'sso_unlinked', audit: { ...audit, detail } });
  });
}

/** Creates an admin without a password, who signs in only through the school's IdP. */
export async function addSsoAdmin(deps: Deps, ref: AdminRef, email: string): Promise<string> {
  const school = await requireSchool(deps.db, ref.schoolId);
  const problem = checkIdentifier(ref.username, 'username', MAX_USERNAME_LENGTH);
  if (problem !== undefined) throw new UsageError(problem);
  await requireSsoIssuer(deps, school.key, school.school_id);
  const address = emailOf(email);
  const now = nowSeconds(deps.clock);
  const id = randomUUID();
  await inTransaction(deps.db, async (trx) => {
    const admin = { id, school_key: school.key, username_key: canonicalKey(ref.username), username: ref.username };
    if (!(await insertAdmin(trx, { ...admin, password_hash: SSO_ONLY_PASSWORD_HASH, disabled_at: null, created_at: now, password_changed_at: now }))) {
      throw new UsageError(`admin ${JSON.stringify(ref.username)} already exists in school ${JSON.stringify(school.school_id)}`);
    }
    if (!(await putSsoLink(trx, { admin_id: id, school_key: school.key, email: address, issuer: null, subject: null, created_at: now, linked_at: null }))) {
      throw new UsageError(`${address} is already linked to another administrator of this school`);
    }
  });
  await recordEvent(deps.db, deps.clock, CLI_CONTEXT, { type: 'admin.created', schoolId: school.key, username: ref.username, adminId: id, detail: `single sign-on only, ${address}` });
  return id;
}
