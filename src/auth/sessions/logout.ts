import { nowSeconds } from '../../runtime/clock.js';
import { findSession } from '../../db/queries/sessions.js';
import { revokeSessions } from '../../db/queries/session-ending.js';
import { recordEvent, type RequestContext } from '../audit/events.js';
import type { AppContext } from '../context.js';
import { hashRefreshToken } from './refresh-token.js';

/**
 * Ends the session a refresh token belongs to. Says nothing about whether the token was valid
 * (RFC 7009): the caller answers 204 either way.
 */
export async function logout(deps: AppContext, token: string, context: RequestContext): Promise<void> {
  const [ended] = await revokeSessions(deps.db, { refreshTokenHash: hashRefreshToken(token) }, 'logout', nowSeconds(deps.clock));
  if (ended === undefined) return;
  const session = await findSession(deps.db, ended.id);
  await recordEvent(deps.db, deps.clock, context, {
    type: 'logout',
    schoolId: session?.school_key ?? null,
    username: session?.username ?? null,
    adminId: ended.admin_id,
    sessionId: ended.id,
  });
}
