import { nowSeconds } from '../runtime/clock.js';
import {
  deleteEndedSessions,
  deleteStaleClientIps,
  deleteStaleCounters,
} from '../db/queries/housekeeping.js';
import type { AppContext } from './context.js';
import { deleteChallenges } from '../db/queries/mfa-challenges.js';
import { feedWindowSeconds } from './sessions/revocation-feed.js';
import { deleteStaleMfaThrottle } from '../db/queries/mfa-throttle.js';
import { MFA_THROTTLE, NEW_ADDRESSES } from './mfa/second-factor-throttle.js';
import { pruneAuditTrail } from './audit/prune-trail.js';
import { pruneSsoRows } from '../db/queries/sso-login-codes.js';
import { CALLBACK_FAILURE_WINDOW } from './sso/callback.js';
import { deleteFinishedMessages } from '../db/queries/outbox.js';
import { deleteDeletedAdmins } from '../db/queries/admin-deletion.js';

const DAY = 86_400;
/** Delivered, dead and dropped messages stay listed by `webhooks deliveries` this long. */
export const FINISHED_MESSAGE_DAYS = 30;
/** An address an admin has not signed in from for this long is new again (and no longer exempts it from throttling, after THROTTLE_KNOWN_IP_DAYS). */
export const SIGN_IN_ADDRESS_DAYS = 365;

interface PruneOptions {
  /** Ended sessions are kept this long for `sessions list`, then deleted. */
  readonly sessionDays: number;
  /** Audit events older than this are deleted, up to a checkpoint (see pruneAuditTrail); undefined keeps them all. */
  readonly eventDays?: number;
}

/**
 * Deletes what no rule needs any more, so tables stay proportional to live sessions. A session
 * ended within the revocation feed's window is kept whatever `sessionDays` says: the feed is what
 * tells verifiers to refuse its still-valid access tokens. `sessionsKeptWithin` reports that
 * window (seconds) when it overrode the requested retention.
 */
export async function prune(deps: Pick<AppContext, 'db' | 'clock' | 'config'>, options: PruneOptions) {
  const now = nowSeconds(deps.clock);
  const feedWindow = feedWindowSeconds(deps.config);
  const clamped = options.sessionDays * DAY < feedWindow;
  const throttle = deps.config.throttle;
  // A counter still matters while any window or the known-IP period could count it.
  const counterHorizon = Math.max(throttle.accountIpWindow, throttle.accountWindow, throttle.ipWindow, throttle.knownIpDays * DAY);
  const sessions = await deleteEndedSessions(deps.db, now - Math.max(options.sessionDays * DAY, feedWindow), deps.config.refreshIdleTimeout);
  return {
    sessions,
    // After the sessions: a deleted admin's row goes with its last session.
    deletedAdmins: await deleteDeletedAdmins(deps.db),
    sessionsKeptWithin: clamped ? feedWindow : undefined,
    counters: await deleteStaleCounters(deps.db, now - counterHorizon, throttle.lockoutFailures),
    clientIps: await deleteStaleClientIps(deps.db, now - Math.max(throttle.knownIpDays, SIGN_IN_ADDRESS_DAYS) * DAY),
    events: options.eventDays === undefined ? 0 : await pruneAuditTrail(deps, (now - options.eventDays * DAY) * 1000),
    // An expired mfa_token can never be answered: nothing needs its row.
    mfaChallenges: await deleteChallenges(deps.db, { expiredBefore: now }),
    // Each address a second factor was tried from has a row, written only by holders of the
    // password; once its window is over it refuses nothing more.
    mfaThrottle: await deleteStaleMfaThrottle(deps.db, now - MFA_THROTTLE.perAddress.window, NEW_ADDRESSES),
    ssoRows: await pruneSsoRows(deps.db, now, CALLBACK_FAILURE_WINDOW),
    messages: await deleteFinishedMessages(deps.db, (now - FINISHED_MESSAGE_DAYS * DAY) * 1000),
  };
}
