import { nowSeconds } from '../../runtime/clock.js';
import { findAdminById, type AdminForLogin } from '../../db/queries/admins.js';
import { bindEmailLink, findLinkByEmail, findLinkByIdentity } from '../../db/queries/sso-links.js';
import type { SsoSettingsRow } from '../../db/queries/sso-settings.js';
import { aboutAdmin, recordEvent, type RequestContext } from '../events.js';
import { replaceEmails } from '../../db/queries/admin-emails.js';
import type { AppContext } from '../context.js';
import { emailKey } from './email-address.js';
import { PROFILES, type Claims } from './providers.js';
import { allowlistOfRow } from './settings.js';

/** Why a verified ID token does not sign anyone in (audit trail only). */
type MatchRefusal = 'azp' | 'domain' | 'tenant' | 'district' | 'email_missing' | 'email_unverified' | 'not_linked' | 'disabled' | 'school_suspended';

type Match = { readonly admin: AdminForLogin } | { readonly refusal: MatchRefusal };

/**
 * Who an ID token (already verified by openid-client: signature, iss, aud, exp, iat, nonce) signs
 * in as. The school's allowlist first; then the bound `(iss, sub)`; only when there is none, an
 * email link waiting for a verified email, which this binds. A reassigned email cannot take over
 * an account whose link is bound, since a bound link has no email left to match.
 */
export async function matchIdentity(deps: AppContext, settings: SsoSettingsRow, claims: Claims, context: RequestContext): Promise<Match> {
  if (claims.azp !== undefined && claims.azp !== settings.client_id) return { refusal: 'azp' };
  const allowlist = allowlistOfRow(settings);
  const refusal = PROFILES[allowlist.provider].check(claims, allowlist);
  if (refusal !== undefined) return { refusal };
  const issuer = String(claims.iss);
  const subject = String(claims.sub);
  const bound = await findLinkByIdentity(deps.db, issuer, subject);
  const adminId = bound?.admin_id ?? (await bindByEmail(deps, settings, claims, { issuer, subject }, context));
  if (typeof adminId !== 'string') return { refusal: adminId.refusal };
  const admin = await findAdminById(deps.db, adminId);
  // A link of another school's admin does not sign in here.
  if (admin === undefined || admin.school_key !== settings.school_key) return { refusal: 'not_linked' };
  if (admin.disabled_at !== null) return { refusal: 'disabled' };
  if (admin.school_suspended_at !== null) return { refusal: 'school_suspended' };
  // The IdP's verified address is where the admin is told of changes to their account.
  if (typeof claims.email === 'string' && claims.email_verified === true) {
    await replaceEmails(deps.db, admin.id, 'sso', [{ address: emailKey(claims.email), type: null }], nowSeconds(deps.clock));
  }
  return { admin };
}

async function bindByEmail(
  deps: AppContext,
  settings: SsoSettingsRow,
  claims: Claims,
  identity: { issuer: string; subject: string },
  context: RequestContext,
): Promise<string | { refusal: MatchRefusal }> {
  // Neither the ID token nor UserInfo named an address: nothing an email link could bind.
  if (typeof claims.email !== 'string') return { refusal: 'email_missing' };
  const email = emailKey(claims.email);
  const waiting = await findLinkByEmail(deps.db, settings.school_key, email);
  if (waiting === undefined) return { refusal: 'not_linked' };
  // Only the IdP's word that the address is the user's binds it: Clever, for one, leaves it unverified.
  if (claims.email_verified !== true) return { refusal: 'email_unverified' };
  if (!(await bindEmailLink(deps.db, waiting.admin_id, email, identity, nowSeconds(deps.clock)))) return { refusal: 'not_linked' };
  // The verified address is stored before the binding is recorded, so its owner is told of it.
  await replaceEmails(deps.db, waiting.admin_id, 'sso', [{ address: email, type: null }], nowSeconds(deps.clock));
  const admin = await findAdminById(deps.db, waiting.admin_id);
  if (admin !== undefined) {
    await recordEvent(deps.db, deps.clock, context, { type: 'sso.linked', ...aboutAdmin(admin), detail: `bound to ${identity.subject} at ${identity.issuer}` });
  }
  return waiting.admin_id;
}
