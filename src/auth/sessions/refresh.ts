import { nowSeconds } from '../../runtime/clock.js';
import type { Config } from '../../config/config.js';
import { findRefreshGrant, type RefreshGrant } from '../../db/queries/refresh-grants.js';
import { rotateRefreshToken } from '../../db/queries/refresh-tokens.js';
import { touchSession } from '../../db/queries/sessions.js';
import { isSessionAlive } from '../../db/queries/session-liveness.js';
import { AppError } from '../../errors.js';
import { issueAccessToken } from '../keys/access-token.js';
import type { RequestContext } from '../events.js';
import type { AppContext } from '../context.js';
import { assuranceOf } from '../keys/assurance.js';
import { endSessions } from './end-sessions.js';
import { generateRefreshToken, hashRefreshToken, openSuccessor, sealSuccessor } from './refresh-token.js';

interface RefreshResult {
  readonly accessToken: string;
  readonly expiresIn: number;
  /** Present only in rotation mode. */
  readonly refreshToken?: string;
  readonly refreshExpiresIn?: number;
}

const invalid = () => new AppError('INVALID_REFRESH_TOKEN');

/**
 * Exchanges a refresh token for a new access token (and, with rotation, a new refresh token).
 * A flat list of guards: unknown, consumed, ended or expired tokens are all the same 401.
 */
export async function exchangeRefreshToken(deps: AppContext, token: string, context: RequestContext): Promise<RefreshResult> {
  const presented: Presented = { token, hash: hashRefreshToken(token) };
  const now = nowSeconds(deps.clock);
  if (deps.config.refreshTokenRotation) return rotateToken(deps, presented, context, now);
  const grant = await findRefreshGrant(deps.db, presented.hash);
  if (grant === undefined) throw invalid();
  if (grant.consumed_at !== null) return replayConsumedToken(deps, grant, presented, context);
  if (!isSessionAlive(grant, now, deps.config)) throw invalid();
  return reuseToken(deps, grant, now);
}

/** The refresh token as presented, hashed once. */
interface Presented {
  readonly token: string;
  readonly hash: string;
}

/**
 * The idle clock is written at most once a minute (a tenth of the idle timeout when that is
 * shorter), so most refreshes in reusable mode are a single read, and a rotation writes only the
 * token rows. The idle timeout is therefore exact to within that interval.
 */
function idleClockInterval(config: Pick<Config, 'refreshIdleTimeout'>): number {
  return Math.min(60, Math.floor(config.refreshIdleTimeout / 10));
}

function idleClockDue(grant: Pick<RefreshGrant, 'last_used_at'>, now: number, config: Pick<Config, 'refreshIdleTimeout'>): boolean {
  return now - grant.last_used_at >= idleClockInterval(config);
}

async function reuseToken(deps: AppContext, grant: RefreshGrant, now: number): Promise<RefreshResult> {
  if (idleClockDue(grant, now, deps.config)) await touchSession(deps.db, grant.session_id, now);
  const access = await issueAccessToken(deps.keys, deps.config, deps.clock, subjectOf(grant));
  return { accessToken: access.token, expiresIn: access.expiresIn };
}

/**
 * Rotation reads the grant and consumes the token in one call (one round trip on PostgreSQL), the
 * database consuming it only for a session alive (session-liveness.ts); the guards
 * below then decide the answer from the grant as it was read.
 */
async function rotateToken(deps: AppContext, presented: Presented, context: RequestContext, now: number): Promise<RefreshResult> {
  const successor = generateRefreshToken();
  const { grant, rotated } = await rotateRefreshToken(deps.db, {
    tokenHash: presented.hash,
    successorHash: hashRefreshToken(successor),
    successorSealed: sealSuccessor(presented.token, successor),
    now,
    idleTimeout: deps.config.refreshIdleTimeout,
    touchAtOrBefore: now - idleClockInterval(deps.config),
  });
  if (grant === undefined) throw invalid();
  if (grant.consumed_at !== null) return replayConsumedToken(deps, grant, presented, context);
  if (!isSessionAlive(grant, now, deps.config)) throw invalid();
  if (!rotated) return replayAfterLostRace(deps, presented, context);
  return rotatedResult(deps, grant, successor, now);
}

/** Another request consumed the token first (or the session was revoked): decide from what it wrote. */
async function replayAfterLostRace(deps: AppContext, presented: Presented, context: RequestContext): Promise<RefreshResult> {
  const grant = await findRefreshGrant(deps.db, presented.hash);
  if (grant === undefined || grant.consumed_at === null) throw invalid();
  return replayConsumedToken(deps, grant, presented, context);
}

/**
 * A consumed token presented again. Within the grace window (several tabs, a lost response) it
 * yields the same successor; later it is treated as theft: the whole session is revoked and the
 * reuse recorded (RFC 9700 §4.14.2).
 */
async function replayConsumedToken(deps: AppContext, grant: RefreshGrant, presented: Presented, context: RequestContext): Promise<RefreshResult> {
  const now = nowSeconds(deps.clock);
  // An ended session has nothing left to protect: no successor, no reuse event.
  if (!isSessionAlive(grant, now, deps.config)) throw invalid();
  const consumedAt = grant.consumed_at ?? now;
  const successor = grant.successor_sealed === null ? undefined : openSuccessor(presented.token, grant.successor_sealed);
  if (now - consumedAt <= deps.config.refreshReuseGrace && successor !== undefined) {
    return rotatedResult(deps, grant, successor, now);
  }
  await endSessions(deps, {
    scope: { sessionId: grant.session_id },
    reason: 'refresh_token_reuse',
    audit: {
      context,
      type: 'refresh.reuse',
      about: { schoolId: grant.school_key, username: grant.username, adminId: grant.admin_id },
      always: true,
      detail: () => `token consumed ${now - consumedAt}s earlier`,
    },
  });
  throw invalid();
}

async function rotatedResult(deps: AppContext, grant: RefreshGrant, successor: string, now: number): Promise<RefreshResult> {
  const access = await issueAccessToken(deps.keys, deps.config, deps.clock, subjectOf(grant));
  return {
    accessToken: access.token,
    expiresIn: access.expiresIn,
    refreshToken: successor,
    refreshExpiresIn: grant.expires_at - now,
  };
}

function subjectOf(grant: RefreshGrant) {
  return {
    adminId: grant.admin_id,
    schoolId: grant.school_id,
    username: grant.username,
    sessionId: grant.session_id,
    // The level the session was signed in with: a refresh neither raises nor lowers it.
    assurance: assuranceOf(grant),
  };
}
