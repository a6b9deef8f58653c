import { nowSeconds } from '../../runtime/clock.js';
import { findAdminById } from '../../db/queries/admins.js';
import { listUnrevokedSessionsOfAdmin } from '../../db/queries/other-sessions.js';
import { AppError } from '../../errors.js';
import type { AccessTokenClaims } from '../keys/access-token.js';
import { aboutAdmin, type RequestContext } from '../events.js';
import { endOtherSessions } from './end-other-sessions.js';
import { endSessions } from './end-sessions.js';
import type { Acr } from '../keys/assurance.js';
import type { AppContext } from '../context.js';
import { isSessionAlive } from '../../db/queries/session-liveness.js';

/** One of an admin's own live sessions, as the self-service list shows it. Times in epoch seconds. */
interface OwnSession {
  readonly sessionId: string;
  readonly createdAt: number;
  readonly lastUsedAt: number;
  readonly ip: string | null;
  readonly userAgent: string | null;
  /** Assurance level the session signed in with, kept for its whole life. */
  readonly acr: Acr;
  /** How it signed in (RFC 8176): `pwd`, or `fed` through the school's identity provider, and the second factor's values. */
  readonly amr: readonly string[];
  readonly current: boolean;
}

/** The live sessions of the token's admin, newest first; ended and expired ones are left out. */
export async function listOwnSessions(deps: AppContext, claims: AccessTokenClaims): Promise<OwnSession[]> {
  const now = nowSeconds(deps.clock);
  const rows = await listUnrevokedSessionsOfAdmin(deps.db, claims.sub);
  return rows
    .filter((row) => isSessionAlive(row, now, deps.config))
    .map((row) => ({
      sessionId: row.id,
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at,
      ip: row.ip,
      userAgent: row.user_agent,
      acr: row.acr === 'aal2' ? 'aal2' : 'aal1',
      amr: row.amr.split(' ').filter((value) => value !== ''),
      current: row.id === claims.sid,
    }));
}

/**
 * Ends one of the admin's own sessions. Another admin's session, an unknown one and one that has
 * already ended are the same 404: the answer tells nobody which session ids exist.
 */
export async function revokeOwnSession(deps: AppContext, claims: AccessTokenClaims, sessionId: string, context: RequestContext): Promise<void> {
  const ended = await endSessions(deps, {
    scope: { sessionId, adminId: claims.sub },
    reason: 'revoked_by_admin',
    audit: { context, type: 'session.revoked', sessionId: claims.sid, detail: () => `self-service: session ${sessionId} ended` },
  });
  if (ended.length === 0) throw new AppError('NOT_FOUND');
}

/** Ends every session of the admin but the one presenting the token (sign out everywhere else). */
export async function revokeOtherSessions(deps: AppContext, claims: AccessTokenClaims, context: RequestContext): Promise<void> {
  const about = await auditSubject(deps, claims);
  const ended = await endOtherSessions(deps, {
    adminId: claims.sub,
    keepSessionId: claims.sid,
    reason: 'revoked_by_admin',
    audit: { context, type: 'session.revoked', about, sessionId: claims.sid, detail: (count) => `self-service: ${count} other sessions ended` },
  });
  // The presenting session itself ended meanwhile (a concurrent request from another session).
  if (ended === undefined) throw new AppError('INVALID_ACCESS_TOKEN');
}

/** The audit fields of the token's admin (the canonical school key, so event filters match). */
async function auditSubject(deps: Pick<AppContext, 'db'>, claims: AccessTokenClaims) {
  const admin = await findAdminById(deps.db, claims.sub);
  return admin === undefined ? { adminId: claims.sub, username: claims.username } : aboutAdmin(admin);
}
