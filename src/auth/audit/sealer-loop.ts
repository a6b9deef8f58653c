import type { AppContext } from '../context.js';
import { onEventRecorded } from '../events.js';
import type { SealedCheckpoint } from './checkpoint-signature.js';
import { HEARTBEAT_MS } from './checkpoint-timeline.js';
import { SEAL_BATCH_SIZE, sealBatch, type SealOptions } from './sealer.js';

interface SealerLoop {
  /** Stops after the batch in progress, if any, has committed or rolled back, and signs a last checkpoint. */
  stop(): Promise<void>;
}

type SealerContext = Pick<AppContext, 'db' | 'clock' | 'keys' | 'logger'>;

/** Milliseconds between rounds: AUDIT_SEAL_INTERVAL, but at least one round a minute for the heartbeat. */
export function roundMs(intervalSeconds: number): number {
  return Math.min(intervalSeconds * 1000, HEARTBEAT_MS);
}

/**
 * The checkpoint as one JSON log line, so a copy leaves the machine with the logs
 * (`events verify --against` reads it back). Written at info even when LOG_LEVEL asks for less,
 * unless logging is off altogether.
 */
function logCheckpoint(logger: AppContext['logger'], checkpoint: SealedCheckpoint): void {
  const { events, ...shipped } = checkpoint;
  const log = logger.level === 'silent' ? logger : logger.child({}, { level: 'info' });
  log.info({ audit_checkpoint: shipped, events }, 'audit checkpoint');
}

/** One batch, or the newest checkpoint signed again when nothing waits and its minute is up. */
async function sealOnce(context: SealerContext, options: SealOptions): Promise<SealedCheckpoint | undefined> {
  const checkpoint = await sealBatch(context, options);
  if (checkpoint !== undefined) logCheckpoint(context.logger, checkpoint);
  return checkpoint;
}

/**
 * Seals in the background: `intervalSeconds` (AUDIT_SEAL_INTERVAL, at most a minute) after this
 * process records an event, and once a minute whatever happens, draining whatever is waiting in
 * batches (events of other processes, such as the CLI, wait at most that minute); a round that
 * finds nothing signs the newest checkpoint again (the heartbeat). An idle service so runs one
 * round a minute. Logins and refreshes never wait for it: they only insert events. A failed round
 * is logged and the next round tries again; the timer never keeps the process alive. Stopping
 * signs a last checkpoint, so the promise made before the service goes down is as recent as it
 * can be.
 */
export function startSealer(context: SealerContext, intervalSeconds: number): SealerLoop {
  const every = roundMs(intervalSeconds);
  const runningSince = context.clock.now();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  /** What the pending timer is for: events waiting (after `every`) or the heartbeat (after a minute). */
  let pending: 'events' | 'heartbeat' | undefined;
  let round: Promise<void> | undefined;
  let eventsSinceRound = false;
  const failed = (error: unknown) => context.logger.error({ err: error }, 'audit sealing failed; the next round retries');

  const drain = async (options: SealOptions) => {
    while (!stopped) {
      const checkpoint = await sealOnce(context, options);
      if (checkpoint === undefined || checkpoint.events < SEAL_BATCH_SIZE) return;
    }
  };
  /** The next round: for events it replaces a heartbeat's timer (`every` is at most a minute). */
  const schedule = (reason: 'events' | 'heartbeat') => {
    if (stopped || round !== undefined || pending === 'events' || pending === reason) return;
    clearTimeout(timer);
    pending = reason;
    timer = setTimeout(
      () => {
        pending = undefined;
        eventsSinceRound = false;
        // A round for events re-signs only what would be a minute old before the next; the
        // heartbeat's, a minute after the last round, re-signs what is half a minute old, so that
        // instances sharing a database do not each sign the same minute again.
        round = drain({ runningSince, nextRoundMs: reason === 'events' ? every : HEARTBEAT_MS / 2 })
          .catch(failed)
          .finally(() => {
            round = undefined;
            schedule(eventsSinceRound ? 'events' : 'heartbeat');
          });
      },
      reason === 'events' ? every : HEARTBEAT_MS,
    );
    timer.unref();
  };
  const unsubscribe = onEventRecorded(() => {
    eventsSinceRound = true;
    schedule('events');
  });
  // Whatever waited while the service was down is sealed after the first interval.
  schedule('events');
  return {
    stop: async () => {
      stopped = true;
      unsubscribe();
      clearTimeout(timer);
      await round;
      // A next round "a minute away" makes the heartbeat due whatever the newest checkpoint's age.
      await sealOnce(context, { runningSince, nextRoundMs: HEARTBEAT_MS }).catch(failed);
    },
  };
}
