import type { AppContext } from '../context.js';
import { listFactors } from '../../db/queries/mfa-factors.js';
import { AppError } from '../../errors.js';
import type { AccessTokenClaims } from '../keys/access-token.js';
import { authenticateAccessToken } from './current-admin.js';

/**
 * Who may manage an account's sessions and password: the bearer of a live session's token, and,
 * once the admin has a second factor, only of a session signed in with it (aal2, docs/api.md).
 * Otherwise a stolen password alone (an aal1 session from before the factor was enrolled) could
 * sign the real admin out everywhere or change the password. Answered with RFC 9470's step-up
 * challenge, like the factor management routes.
 */
export async function authenticateSelfService(deps: AppContext, token: string): Promise<AccessTokenClaims> {
  const claims = await authenticateAccessToken(deps, token);
  if (claims.acr === 'aal2') return claims;
  const factors = await listFactors(deps.db, claims.sub);
  if (factors.length > 0) throw new AppError('MFA_STEP_UP_REQUIRED');
  return claims;
}
