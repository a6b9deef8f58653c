import { nowSeconds } from '../runtime/clock.js';
import {
  deleteEndedSessions,
  deleteEventsBefore,
  deleteStaleClientIps,
  deleteStaleCounters,
} from '../db/queries/housekeeping.js';
import type { AppContext } from './context.js';
import { deleteChallenges } from '../db/queries/mfa-challenges.js';
import { pruneSsoRows } from '../db/queries/sso-login-codes.js';
import { CALLBACK_FAILURE_WINDOW } from './sso/callback.js';

const DAY = 86_400;

export interface PruneOptions {
  /** Ended sessions are kept this long for `sessions list`, then deleted. */
  readonly sessionDays: number;
  /** Audit events older than this are deleted; undefined keeps them all. */
  readonly eventDays?: number;
}

/** Deletes what no rule needs any more, so tables stay proportional to live sessions. */
export async function prune(deps: Pick<AppContext, 'db' | 'clock' | 'config'>, options: PruneOptions) {
  const now = nowSeconds(deps.clock);
  const throttle = deps.config.throttle;
  // A counter still matters while any window or the known-IP period could count it.
  const counterHorizon = Math.max(throttle.accountIpWindow, throttle.accountWindow, throttle.ipWindow, throttle.knownIpDays * DAY);
  return {
    sessions: await deleteEndedSessions(deps.db, now - options.sessionDays * DAY, deps.config.refreshIdleTimeout),
    counters: await deleteStaleCounters(deps.db, now - counterHorizon, throttle.lockoutFailures),
    clientIps: await deleteStaleClientIps(deps.db, now - throttle.knownIpDays * DAY),
    events: options.eventDays === undefined ? 0 : await deleteEventsBefore(deps.db, (now - options.eventDays * DAY) * 1000),
    // An expired mfa_token can never be answered: nothing needs its row.
    mfaChallenges: await deleteChallenges(deps.db, { expiredBefore: now }),
    ssoRows: await pruneSsoRows(deps.db, now, CALLBACK_FAILURE_WINDOW),
  };
}
