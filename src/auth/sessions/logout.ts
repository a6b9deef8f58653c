import type { RequestContext } from '../events.js';
import type { AppContext } from '../context.js';
import { endSessions } from './end-sessions.js';
import { hashRefreshToken } from './refresh-token.js';

/**
 * Ends the session a refresh token belongs to. Says nothing about whether the token was valid
 * (RFC 7009): the caller answers 204 either way.
 */
export async function logout(deps: AppContext, token: string, context: RequestContext): Promise<void> {
  await endSessions(deps, { scope: { refreshTokenHash: hashRefreshToken(token) }, reason: 'logout', audit: { context, type: 'logout' } });
}
