import type { AppContext } from '../context.js';
import { listFactors } from '../../db/queries/mfa-factors.js';
import { findAdminById } from '../../db/queries/admins.js';
import { findSessionAuthTime } from '../../db/queries/sessions.js';
import { nowSeconds } from '../../runtime/clock.js';
import { AppError } from '../../errors.js';
import { authenticateAccessToken } from '../sessions/current-admin.js';
import type { Acr } from '../keys/assurance.js';
import { openChallenge, type OpenedChallenge } from './challenge.js';

type Admin = NonNullable<Awaited<ReturnType<typeof findAdminById>>>;

/** Who manages second factors: an access token's admin, or (first factor only) an mfa_token's. */
export type MfaPrincipal =
  | { readonly kind: 'access'; readonly admin: Admin; readonly acr: Acr; readonly sessionId: string }
  | { readonly kind: 'mfa_token'; readonly admin: Admin; readonly opened: OpenedChallenge };

/**
 * The bearer of a management request. An access token is a JWT (it has dots); an mfa_token is
 * 43 base64url characters without any, so the two can never be taken for each other.
 */
export async function authenticateMfaPrincipal(deps: AppContext, bearer: string): Promise<MfaPrincipal> {
  if (!bearer.includes('.')) {
    // Only an enrollment's mfa_token is a bearer here; a sign-in's never becomes one.
    const opened = await openChallenge(deps, bearer, 'enroll');
    return { kind: 'mfa_token', admin: opened.admin, opened };
  }
  const claims = await authenticateAccessToken(deps, bearer);
  const admin = await findAdminById(deps.db, claims.sub);
  if (admin === undefined) throw new AppError('INVALID_ACCESS_TOKEN');
  return { kind: 'access', admin, acr: claims.acr, sessionId: claims.sid };
}

/**
 * Seconds within which a second factor must have been presented to manage factors (RFC 9470
 * `max_age`): a session that refreshed for hours does not prove its holder still has the factor.
 */
const STEP_UP_MAX_AGE = 15 * 60;

/**
 * Changing the factors of an admin who has one needs proof of one, recently: an aal2 access token
 * whose session presented a second factor within STEP_UP_MAX_AGE (RFC 9470 step-up). Without any
 * factor yet, an aal1 token may enroll, and so may an mfa_token (the `required` school's
 * enrollment during login) when `mfaTokenAllowed`.
 */
export async function requireFactorManager(deps: AppContext, principal: MfaPrincipal, mfaTokenAllowed: boolean): Promise<{ hasFactor: boolean }> {
  const hasFactor = (await listFactors(deps.db, principal.admin.id)).length > 0;
  if (principal.kind === 'mfa_token' && (hasFactor || !mfaTokenAllowed)) throw new AppError('INVALID_ACCESS_TOKEN');
  if (principal.kind === 'mfa_token' || !hasFactor) return { hasFactor };
  if (principal.acr !== 'aal2') throw new AppError('MFA_STEP_UP_REQUIRED');
  const authTime = await findSessionAuthTime(deps.db, principal.sessionId);
  if (authTime === null || authTime < nowSeconds(deps.clock) - STEP_UP_MAX_AGE) {
    const challenge = `Bearer error="insufficient_user_authentication", acr_values="aal2", max_age="${STEP_UP_MAX_AGE}"`;
    throw new AppError('MFA_STEP_UP_REQUIRED', { headers: { 'www-authenticate': challenge } });
  }
  return { hasFactor };
}

/**
 * The credential epoch the bearer stands for: the mfa_token's, or the access token's admin as
 * read. What a bearer writes is conditional on it, so an operator's action ends it everywhere.
 */
export function epochOf(principal: MfaPrincipal): number {
  return principal.kind === 'mfa_token' ? principal.opened.challenge.credential_epoch : principal.admin.credential_epoch;
}

/** The refusal for a bearer whose credential epoch an operator moved on while it was being used. */
export function bearerEnded(principal: MfaPrincipal): AppError {
  return new AppError(principal.kind === 'mfa_token' ? 'MFA_TOKEN_INVALID' : 'INVALID_ACCESS_TOKEN');
}
