import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import { findMfaThrottle, releaseMfaAttempts, reserveMfaAttempt, type MfaAttempt, type MfaThrottleRules } from '../../db/queries/mfa-throttle.js';
import { isKnownClientIp } from '../../db/queries/throttle.js';
import { AppError } from '../../errors.js';
import { aboutAdmin, recordEvent, type RequestContext } from '../events.js';
import { accountOf } from '../throttling/throttle-rules.js';

/**
 * The second factor's throttle (docs/second-factor.md), under the login throttle's rule that
 * throttling never keeps an admin out of an address they signed in from before: 10 failures in
 * 15 minutes per (admin, address), always, so an attacker at a known address is limited too; and
 * 10 in 15 minutes, 100 in a row locking, for every address new to the admin together, which is
 * all an attacker elsewhere can exhaust.
 */
export const MFA_THROTTLE: { readonly perAddress: MfaThrottleRules; readonly newAddresses: MfaThrottleRules } = {
  perAddress: { maxFailures: 10, window: 15 * 60 },
  newAddresses: { maxFailures: 10, window: 15 * 60, lockAfter: 100 },
};

/** The scope of all addresses the admin never signed in from. */
export const NEW_ADDRESSES = 'new';

type Admin = { readonly id: string; readonly school_key: string; readonly username_key: string; readonly username: string };

interface Admitted {
  readonly scopes: readonly string[];
  /** The counts of the scope that decides the events: the new addresses' one, else the address's. */
  readonly attempt: MfaAttempt;
}

class Refused extends Error {
  constructor(readonly scope: string, readonly rules: MfaThrottleRules) {
    super('refused');
  }
}

/** The scopes one attempt is counted in: its address always, and the shared one unless the address is known. */
async function scopesOf(deps: AppContext, admin: Admin, ip: string | null, now: number): Promise<[string, MfaThrottleRules][]> {
  const address: [string, MfaThrottleRules] = [`ip:${ip ?? 'unknown'}`, MFA_THROTTLE.perAddress];
  const since = now - deps.config.throttle.knownIpDays * 86_400;
  const known = ip !== null && (await isKnownClientIp(deps.db, accountOf(admin.school_key, admin.username_key), ip, since));
  return known ? [address] : [address, [NEW_ADDRESSES, MFA_THROTTLE.newAddresses]];
}

/**
 * Lets one second-factor attempt through, counted as a failure in each of its scopes until it
 * proves right, or refuses it: 403 once locked, 429 with Retry-After for the rest of the window.
 * All scopes are counted in one transaction or none is; attempts are counted per admin, not per
 * mfa_token, so signing in again does not buy more guesses.
 */
async function admitSecondFactor(deps: AppContext, admin: Admin, ip: string | null): Promise<Admitted> {
  const now = nowSeconds(deps.clock);
  const scopes = await scopesOf(deps, admin, ip, now);
  try {
    return await deps.db.transaction().execute(async (trx) => {
      let attempt: MfaAttempt | undefined;
      for (const [scope, rules] of scopes) {
        attempt = await reserveMfaAttempt(trx, admin.id, scope, rules, now);
        if (attempt === undefined) throw new Refused(scope, rules);
      }
      return { scopes: scopes.map(([scope]) => scope), attempt: attempt as MfaAttempt };
    });
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    const state = await findMfaThrottle(deps.db, admin.id, error.scope);
    if (state === undefined || state.locked_at !== null) throw new AppError('MFA_LOCKED');
    const wait = Math.max(1, state.window_start + error.rules.window - now);
    throw new AppError('MFA_THROTTLED', { headers: { 'retry-after': String(wait) } });
  }
}

/** The audit events of a failed attempt: one when a window fills, one when it locks. */
async function recordSecondFactorFailure(deps: AppContext, admin: Admin, attempt: MfaAttempt, context: RequestContext, detail: string) {
  const about = aboutAdmin(admin);
  await recordEvent(deps.db, deps.clock, context, { type: 'mfa.failure', ...about, detail });
  if (attempt.failures === MFA_THROTTLE.perAddress.maxFailures) {
    await recordEvent(deps.db, deps.clock, context, { type: 'mfa.throttled', ...about, detail: `${attempt.failures} failures in the window` });
  }
  if (attempt.locked) {
    await recordEvent(deps.db, deps.clock, context, { type: 'mfa.locked', ...about, detail: `${attempt.consecutive} consecutive failures` });
  }
}

/**
 * Runs one second-factor check through the admin's throttle: admitted (or refused) first, counted
 * as a failure until it proves right; a wrong answer is recorded with `detail` and answers 401
 * `Invalid second factor`, a right one gives its reservations back. Returns what the check proved.
 */
export async function throttledSecondFactor<T>(
  deps: AppContext,
  admin: Admin,
  context: RequestContext,
  detail: string,
  check: () => Promise<T | undefined>,
): Promise<T> {
  const admitted = await admitSecondFactor(deps, admin, context.ip);
  const proven = await check();
  if (proven === undefined) {
    await recordSecondFactorFailure(deps, admin, admitted.attempt, context, detail);
    throw new AppError('MFA_INVALID');
  }
  await releaseMfaAttempts(deps.db, admin.id, admitted.scopes);
  return proven;
}
