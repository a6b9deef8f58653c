import { findAdminById, type AdminForLogin } from '../../db/queries/admins.js';
import { AppError } from '../../errors.js';
import type { AccessTokenClaims } from '../keys/access-token.js';
import { aboutAdmin, type RequestContext } from '../events.js';
import type { AppContext } from '../context.js';
import { checkNewPassword } from '../passwords/passwords.js';
import { accountOf } from '../throttling/throttle-rules.js';
import { admitPasswordCheck, recordPasswordFailure } from '../throttling/login-attempt.js';
import { releaseLoginAttempt } from '../throttling/throttle.js';
import { endOtherSessions } from '../sessions/end-other-sessions.js';

/** A new password that breaks the rules: the route turns it into a 422 item at ["body","new_password"]. */
export class NewPasswordRejected extends Error {
  constructor(readonly problem: string) {
    super(problem);
    this.name = 'NewPasswordRejected';
  }
}

/**
 * Changes the token's admin's own password. The current password is checked like a login (the
 * same throttling layers count a wrong one, so a stolen access token cannot be used to guess it),
 * and the change ends every other session of the admin in the same transaction; the presenting
 * session survives, so the admin stays signed in where they made the change.
 */
export async function changeOwnPassword(
  deps: AppContext,
  claims: AccessTokenClaims,
  passwords: { current: string; next: string },
  context: RequestContext,
): Promise<void> {
  // Decided from the body and the token alone, before any lookup or hashing, as every 422 is.
  const problem = checkNewPassword(passwords.next, { username: claims.username, schoolId: claims.school_id });
  if (problem !== undefined) throw new NewPasswordRejected(problem);
  const admin = await findAdminById(deps.db, claims.sub);
  if (admin === undefined) throw new AppError('INVALID_ACCESS_TOKEN');
  await checkCurrentPassword(deps, admin, passwords.current, context);
  const hash = await deps.hasher.hash(passwords.next);
  const ended = await endOtherSessions(deps, {
    adminId: admin.id,
    keepSessionId: claims.sid,
    reason: 'password_changed',
    passwordHash: hash,
    audit: { context, type: 'admin.password_changed', about: aboutAdmin(admin), sessionId: claims.sid, detail: (count) => `self-service: ${count} other sessions ended` },
  });
  // The presenting session ended while the hash was computed (a revoke, another password change).
  if (ended === undefined) throw new AppError('INVALID_ACCESS_TOKEN');
}

async function checkCurrentPassword(deps: AppContext, admin: AdminForLogin, password: string, context: RequestContext): Promise<void> {
  const account = accountOf(admin.school_key, admin.username_key);
  const ip = context.ip ?? 'unknown';
  const reservation = await admitPasswordCheck(deps, account, ip, context, aboutAdmin(admin));
  const matches = await deps.hasher.verify(admin.password_hash, password).catch(async (error: unknown) => {
    // Not checked (hash queue full): not a failure either.
    await releaseLoginAttempt(deps, account, ip).catch(() => undefined);
    throw error;
  });
  if (!matches) {
    await recordPasswordFailure(deps, reservation, context, aboutAdmin(admin), 'wrong_current_password');
    throw new AppError('INCORRECT_PASSWORD');
  }
  // The right password is not a failure: give the reserved attempt back.
  await releaseLoginAttempt(deps, account, ip);
}
