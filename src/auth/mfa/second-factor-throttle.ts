import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import { findMfaThrottle, releaseMfaAttempt, reserveMfaAttempt, type MfaAttempt, type MfaThrottleRules } from '../../db/queries/mfa-throttle.js';
import { AppError } from '../../errors.js';
import { aboutAdmin, recordEvent, type RequestContext } from '../audit/events.js';

/** DESIGN.md §6: 10 failures per admin in 15 minutes, and a ceiling of 100 consecutive ones. */
export const MFA_THROTTLE: MfaThrottleRules = { maxFailures: 10, window: 15 * 60, lockAfter: 100 };

type Admin = { readonly id: string; readonly school_key: string; readonly username: string };

/**
 * Lets one second-factor attempt of `admin` through, counted as a failure until it proves right,
 * or refuses it: 403 once locked, 429 with Retry-After for the rest of the window. The attempts
 * are counted per admin, not per mfa_token, so signing in again does not buy more guesses.
 */
async function admitSecondFactor(deps: AppContext, admin: Admin): Promise<MfaAttempt> {
  const now = nowSeconds(deps.clock);
  const attempt = await reserveMfaAttempt(deps.db, admin.id, MFA_THROTTLE, now);
  if (attempt !== undefined) return attempt;
  const state = await findMfaThrottle(deps.db, admin.id);
  if (state === undefined || state.locked_at !== null) throw new AppError('MFA_LOCKED');
  const wait = Math.max(1, state.window_start + MFA_THROTTLE.window - now);
  throw new AppError('MFA_THROTTLED', { headers: { 'retry-after': String(wait) } });
}

/** The audit events of a failed attempt: one when the window fills, one when it locks. */
async function recordSecondFactorFailure(deps: AppContext, admin: Admin, attempt: MfaAttempt, context: RequestContext, detail: string) {
  const about = aboutAdmin(admin);
  await recordEvent(deps.db, deps.clock, context, { type: 'mfa.failure', ...about, detail });
  if (attempt.failures === MFA_THROTTLE.maxFailures) {
    await recordEvent(deps.db, deps.clock, context, { type: 'mfa.throttled', ...about, detail: `${attempt.failures} failures in the window` });
  }
  if (attempt.locked) {
    await recordEvent(deps.db, deps.clock, context, { type: 'mfa.locked', ...about, detail: `${attempt.consecutive} consecutive failures` });
  }
}

/**
 * Runs one second-factor check through the admin's throttle: admitted (or refused) first, counted
 * as a failure until it proves right; a wrong answer is recorded with `detail` and answers 401
 * `Invalid second factor`, a right one gives its reservation back. Returns what the check proved.
 */
export async function throttledSecondFactor<T>(
  deps: AppContext,
  admin: Admin,
  context: RequestContext,
  detail: string,
  check: () => Promise<T | undefined>,
): Promise<T> {
  const attempt = await admitSecondFactor(deps, admin);
  const proven = await check();
  if (proven === undefined) {
    await recordSecondFactorFailure(deps, admin, attempt, context, detail);
    throw new AppError('MFA_INVALID');
  }
  await releaseMfaAttempt(deps.db, admin.id);
  return proven;
}
