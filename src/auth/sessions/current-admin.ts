import { nowSeconds } from '../../runtime/clock.js';
import { findSessionStatus } from '../../db/queries/sessions.js';
import { AppError } from '../../errors.js';
import { verifyAccessToken, type AccessTokenClaims } from '../keys/access-token.js';
import type { AppContext } from '../context.js';
import { isSessionAlive } from '../../db/queries/session-liveness.js';

/**
 * Who a bearer token belongs to. Beyond the signature checks every service can do alone, this
 * also refuses a token whose session has ended (logout, revoke, disabled admin, suspended school).
 */
export async function authenticateAccessToken(deps: AppContext, token: string): Promise<AccessTokenClaims> {
  const claims = await verifyAccessToken(deps.keys, deps.config, deps.clock, token);
  const session = await findSessionStatus(deps.db, claims.sid);
  if (session === undefined || !isSessionAlive(session, nowSeconds(deps.clock), deps.config)) {
    throw new AppError('INVALID_ACCESS_TOKEN');
  }
  return claims;
}
