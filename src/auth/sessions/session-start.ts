import { secureRandomBytes } from '../secure-random.js';
import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import type { AdminForLogin } from '../../db/queries/admins.js';
import { insertSession } from '../../db/queries/sessions.js';
import { AppError } from '../../errors.js';
import { issueAccessToken } from '../keys/access-token.js';
import { aboutAdmin, recordEvent, type RequestContext } from '../events.js';
import { amrText, type Assurance } from '../keys/assurance.js';
import { generateRefreshToken, hashRefreshToken } from './refresh-token.js';
import { settleLoginSuccess } from '../throttling/throttle.js';

export interface LoginResult {
  readonly accessToken: string;
  readonly expiresIn: number;
  readonly refreshToken: string;
  readonly refreshExpiresIn: number;
  readonly schoolId: string;
  readonly username: string;
}

/** The IdP identity of a session signed in through single sign-on (docs/sso.md). */
export interface Federation {
  readonly issuer: string;
  readonly subject: string;
  readonly idpSession: string | null;
}

/**
 * Starts the session of an admin whose credentials were checked, at the assurance they proved;
 * also the end of a second-factor verification. `admin.credential_epoch` is the epoch at which
 * the password was checked. A federated session's absolute expiry is also bounded by
 * SSO_SESSION_MAX_AGE, so the refresh path enforces it without reading anything more.
 */
export async function startSession(
  deps: AppContext,
  admin: AdminForLogin,
  client: { account: string; ip: string },
  context: RequestContext,
  assurance: Assurance,
  federation?: Federation,
): Promise<LoginResult> {
  const now = nowSeconds(deps.clock);
  const sessionId = secureRandomBytes(16).toString('base64url');
  const refreshToken = generateRefreshToken();
  const lifetime = federation === undefined ? deps.config.refreshAbsoluteLifetime : Math.min(deps.config.refreshAbsoluteLifetime, deps.config.sso.sessionMaxAge);
  const expiresAt = now + lifetime;
  const session = {
    id: sessionId,
    admin_id: admin.id,
    created_at: now,
    last_used_at: now,
    expires_at: expiresAt,
    ip: context.ip,
    user_agent: context.userAgent?.slice(0, 512) ?? null,
    credential_epoch: admin.credential_epoch,
    acr: assurance.acr,
    amr: amrText(assurance.amr),
    // A second factor presented now: what step-up freshness counts from.
    auth_time: assurance.acr === 'aal2' ? now : null,
    sso_issuer: federation?.issuer ?? null,
    sso_subject: federation?.subject ?? null,
    sso_session: federation?.idpSession ?? null,
  };
  // One transaction, committed before we answer: a 200 always stands for a durable session, and
  // costs one commit (one fsync on SQLite) rather than one per statement.
  const started = await deps.db.transaction().execute(async (trx) => {
    if (!(await insertSession(trx, session, hashRefreshToken(refreshToken)))) return false;
    const newAddress = await settleLoginSuccess({ ...deps, db: trx }, client.account, client.ip);
    await recordEvent(trx, deps.clock, context, { type: federation === undefined ? 'login.success' : 'sso.success', ...aboutAdmin(admin), sessionId });
    if (newAddress && context.ip !== null) {
      await recordEvent(trx, deps.clock, context, { type: 'login.new_address', ...aboutAdmin(admin), sessionId, detail: context.ip });
    }
    return true;
  });
  if (!started) {
    // An operator changed the password, disabled the admin or suspended the school after this
    // login checked the password: the login is refused like any other.
    await recordEvent(deps.db, deps.clock, context, { type: 'login.failure', ...aboutAdmin(admin), detail: 'sessions_ended_meanwhile' });
    throw new AppError('LOGIN_REFUSED');
  }
  const subject = { adminId: admin.id, schoolId: admin.school_id, username: admin.username, sessionId, assurance };
  const access = await issueAccessToken(deps.keys, deps.config, deps.clock, subject);
  return {
    accessToken: access.token,
    expiresIn: access.expiresIn,
    refreshToken,
    refreshExpiresIn: expiresAt - now,
    schoolId: admin.school_id,
    username: admin.username,
  };
}
