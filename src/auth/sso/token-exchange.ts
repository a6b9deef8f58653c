import { findAdminById } from '../../db/queries/admins.js';
import { AppError } from '../../errors.js';
import { aboutAdmin, recordEvent, type RequestContext } from '../events.js';
import type { AppContext } from '../context.js';
import type { Assurance } from '../keys/assurance.js';
import { secondFactorChallenge, type SecondFactorChallenge } from '../mfa/challenge.js';
import { startSession, type LoginResult } from '../sessions/session-start.js';
import { accountOf } from '../throttling/throttle-rules.js';
import { redeemLoginCode } from './login-code.js';

/** Signed in at the IdP (RFC 8176 `fed`); with its MFA when the school trusts it and `amr` shows one. */
const FEDERATED: Assurance = { acr: 'aal1', amr: ['fed'] };
const FEDERATED_WITH_MFA: Assurance = { acr: 'aal2', amr: ['fed', 'mfa'] };

/**
 * Exchanges the front end's login code and PKCE verifier for exactly what a login answers: a
 * session, or the second-factor 403 when the school's policy asks for ours and the IdP's MFA is
 * not trusted (docs/sso.md). The session starts at the credential epoch seen at the callback, so
 * a disable or suspend in between refuses it, and its absolute expiry is bounded by SSO_SESSION_MAX_AGE.
 */
export async function exchangeLoginCode(deps: AppContext, code: string, verifier: string, context: RequestContext): Promise<LoginResult | SecondFactorChallenge> {
  const grant = await redeemLoginCode(deps, code, verifier);
  const found = await findAdminById(deps.db, grant.admin_id);
  if (found === undefined) throw new AppError('SSO_CODE_INVALID');
  const admin = { ...found, credential_epoch: grant.credential_epoch };
  const federation = { issuer: grant.issuer, subject: grant.subject, idpSession: grant.idp_session };
  const client = { account: accountOf(admin.school_key, admin.username_key), ip: context.ip ?? 'unknown' };
  // An operator who disabled the admin or suspended the school since the callback wins: the
  // session is refused (sessions_ended_meanwhile), with this endpoint's one 401.
  const start = (assurance: Assurance) =>
    startSession(deps, admin, client, context, assurance, federation).catch((error: unknown) => {
      throw error instanceof AppError && error.code === 'LOGIN_REFUSED' ? new AppError('SSO_CODE_INVALID') : error;
    });
  if (grant.idp_mfa === 1) return start(FEDERATED_WITH_MFA);
  const challenge = await secondFactorChallenge(deps, admin, federation);
  if (challenge === undefined) return start(FEDERATED);
  await recordEvent(deps.db, deps.clock, context, { type: 'mfa.challenged', ...aboutAdmin(admin), detail: challenge.enrollment ? 'enroll sso' : 'login sso' });
  return challenge;
}
