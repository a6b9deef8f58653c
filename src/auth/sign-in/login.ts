import { isPasswordLoginOff } from '../../db/queries/sso-settings.js';
import { SSO_ONLY_PASSWORD_HASH } from '../sso/links.js';
import { findAdminForLogin, replacePasswordHash, type AdminForLogin } from '../../db/queries/admins.js';
import { hasDiscoverablePasskey } from '../../db/queries/passkey-sign-in.js';
import { AppError } from '../../errors.js';
import { aboutAdmin, recordEvent, type RequestContext } from '../events.js';
import type { AppContext } from '../context.js';
import { canonicalKey } from '../identity.js';
import { PASSWORD_ONLY } from '../keys/assurance.js';
import { secondFactorChallenge, type SecondFactorChallenge } from '../mfa/challenge.js';
import { startSession, type LoginResult } from '../sessions/session-start.js';
import { accountOf } from '../throttling/throttle-rules.js';
import { admitPasswordCheck, recordPasswordFailure } from '../throttling/login-attempt.js';
import { releaseLoginAttempt } from '../throttling/throttle.js';

export type { LoginResult } from '../sessions/session-start.js';

interface Credentials {
  readonly schoolId: string;
  readonly username: string;
  readonly password: string;
}

/**
 * Signs an administrator in. Every refusal is the same AppError whatever the reason, and every
 * attempt does exactly one password verification (a dummy one for an unknown account), so neither
 * the answer nor its timing tells an attacker which schools or usernames exist.
 */
export async function login(deps: AppContext, credentials: Credentials, context: RequestContext): Promise<LoginResult | SecondFactorChallenge> {
  const schoolKey = canonicalKey(credentials.schoolId);
  const usernameKey = canonicalKey(credentials.username);
  const account = accountOf(schoolKey, usernameKey);
  const ip = context.ip ?? 'unknown';
  const audit = { schoolId: schoolKey, username: credentials.username };
  // Before any password check or throttle count. It tells a caller no more than the school's SSO
  // start already does (that the school exists and signs in through its IdP); see docs/sso.md.
  if (await isPasswordLoginOff(deps.db, schoolKey)) throw new AppError('PASSWORD_LOGIN_OFF');
  const reservation = await admitPasswordCheck(deps, account, ip, context, audit);
  const { admin, passwordMatches } = await checkCredentials(deps, schoolKey, usernameKey, credentials.password).catch(async (error: unknown) => {
    // Not checked (hash queue full, database error): not a failure either.
    await releaseLoginAttempt(deps, account, ip).catch(() => undefined);
    throw error;
  });
  const refusal = refusalReason(admin, passwordMatches);
  if (refusal !== undefined || admin === undefined) {
    await recordPasswordFailure(deps, reservation, context, { ...audit, adminId: admin?.id ?? null }, refusal ?? null);
    throw new AppError('LOGIN_REFUSED');
  }
  await upgradeHashIfNeeded(deps, admin, credentials.password);
  await refuseIfPasskeyRequired(deps, admin, { account, ip }, context);
  const challenge = await secondFactorChallenge(deps, admin);
  if (challenge === undefined) {
    return startSession(deps, admin, { account, ip }, context, PASSWORD_ONLY).catch(async (error: unknown) => {
      // The password was right: a session the database could not store (a full disk) is no
      // failed login either, or the 503s would add up to a backoff the admin did not earn.
      if (!(error instanceof AppError)) await releaseLoginAttempt(deps, account, ip).catch(() => undefined);
      throw error;
    });
  }
  // A right password is not a failed login; the session waits for the second factor, which
  // settles the login throttle when it succeeds.
  await releaseLoginAttempt(deps, account, ip);
  await recordEvent(deps.db, deps.clock, context, { type: 'mfa.challenged', ...aboutAdmin(admin), detail: challenge.enrollment ? 'enroll' : 'login' });
  return challenge;
}

async function checkCredentials(deps: AppContext, schoolKey: string, usernameKey: string, password: string) {
  const admin = await findAdminForLogin(deps.db, schoolKey, usernameKey);
  return { admin, passwordMatches: await verifyPassword(deps, admin, password) };
}

async function verifyPassword(deps: AppContext, admin: AdminForLogin | undefined, password: string): Promise<boolean> {
  // An admin without a password (single sign-on only) costs a full verification too, or the
  // quick refusal would tell which accounts exist and sign in only through the IdP.
  if (admin === undefined || admin.password_hash === SSO_ONLY_PASSWORD_HASH) {
    await deps.hasher.verifyDummy(password);
    return false;
  }
  return deps.hasher.verify(admin.password_hash, password);
}

/** The internal reason, for the audit trail only; the client never sees it. */
function refusalReason(admin: AdminForLogin | undefined, passwordMatches: boolean): string | undefined {
  if (admin === undefined) return 'unknown_account';
  if (!passwordMatches) return 'wrong_password';
  if (admin.school_suspended_at !== null) return 'school_suspended';
  if (admin.disabled_at !== null) return 'admin_disabled';
  return undefined;
}

/**
 * A school that requires passkey sign-in refuses the password step of an admin who has a
 * discoverable passkey, before any mfa_token: after the right password only, so the 403 tells
 * nothing to someone without it. The right password is no failed login; the event says why.
 */
async function refuseIfPasskeyRequired(deps: AppContext, admin: AdminForLogin, client: { account: string; ip: string }, context: RequestContext): Promise<void> {
  if (admin.school_passkey_policy !== 'required' || !(await hasDiscoverablePasskey(deps.db, admin.id))) return;
  await releaseLoginAttempt(deps, client.account, client.ip);
  await recordEvent(deps.db, deps.clock, context, { type: 'login.failure', ...aboutAdmin(admin), detail: 'passkey_required' });
  throw new AppError('PASSKEY_REQUIRED');
}

/** Rehash with the configured parameters once the password is known to be right. */
async function upgradeHashIfNeeded(deps: AppContext, admin: AdminForLogin, password: string): Promise<void> {
  if (!deps.hasher.needsRehash(admin.password_hash)) return;
  const upgraded = await deps.hasher.hash(password);
  await replacePasswordHash(deps.db, admin.id, admin.password_hash, upgraded);
}
