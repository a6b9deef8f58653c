import { onEventRecorded } from '../auth/events.js';
import { secureRandomBytes } from '../auth/secure-random.js';
import { nextDueAt } from '../db/queries/outbox.js';
import { createMailer } from './email-send.js';
import type { OutboxCounts } from '../runtime/outbox-counts.js';
import { deliverRound, ROUND_SIZE, type DeliveryDeps } from './delivery-round.js';

/** The longest wait between rounds: messages written by other instances or the CLI wait at most this long. */
export const POLL_MS = 30_000;
/** After this process records an event: time for its transaction to commit before the round looks. */
const WAKE_MS = 200;

interface DeliveryLoop {
  /** Stops after the round in progress (each attempt is bounded by its timeouts). */
  stop(): Promise<void>;
}

/**
 * Delivers the outbox in the background: soon after this process records an event, when the
 * next retry falls due, and at least every POLL_MS. Logins and refreshes never wait for it; a
 * failed round is logged and the next one tries again; the timer never keeps the process alive.
 */
export function startDelivery(deps: DeliveryDeps, counts: OutboxCounts): DeliveryLoop {
  const smtp = deps.config.notifications.smtp;
  const channels = { mailer: smtp === undefined ? undefined : createMailer(smtp), policy: { allowPrivate: deps.config.notifications.webhookAllowPrivate } };
  const owner = secureRandomBytes(12).toString('base64url');
  // SMTP_URL checked at start as a send would use it, so a wrong host or login shows in the log
  // now rather than in the first dead letter; nothing is refused for it.
  void channels.mailer?.verify().then((problem) => {
    if (problem === undefined) deps.logger.info({ smtp: 'ok' }, 'mail server reached: e-mail notifications can be sent');
    else deps.logger.warn({ problem }, 'SMTP_URL: the mail server cannot be used now; e-mails wait and are retried');
  });
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Infinity;
  let round: Promise<void> | undefined;
  let again = false;

  const run = async () => {
    while (!stopped && (await deliverRound(deps, channels, counts, owner)) === ROUND_SIZE);
  };
  const wait = async () => {
    const due = await nextDueAt(deps.db);
    return due === undefined ? POLL_MS : Math.min(POLL_MS, Math.max(WAKE_MS, due - deps.clock.now()));
  };
  const schedule = (ms: number) => {
    if (stopped) return;
    if (round !== undefined) {
      again = true;
      return;
    }
    const at = Date.now() + ms;
    if (at >= timerAt) return;
    clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(start, ms);
    timer.unref();
  };
  const start = () => {
    timerAt = Infinity;
    again = false;
    round = run()
      .then(async () => (again ? WAKE_MS : await wait()))
      .catch((error: unknown) => {
        deps.logger.error({ err: error }, 'notification delivery failed; the next round retries');
        return POLL_MS;
      })
      .then((next) => {
        round = undefined;
        schedule(next);
      });
  };
  const unsubscribe = onEventRecorded(() => schedule(WAKE_MS));
  schedule(0);
  return {
    async stop() {
      stopped = true;
      unsubscribe();
      clearTimeout(timer);
      await round;
      channels.mailer?.close();
    },
  };
}
