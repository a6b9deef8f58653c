import type { AppContext } from '../context.js';
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
 * Seals in the background every `intervalSeconds` (AUDIT_SEAL_INTERVAL) or every minute if that
 * is longer, draining whatever is waiting in batches; a round that finds nothing signs the newest
 * checkpoint again once a minute (the heartbeat). Logins and refreshes never wait for it: they only
 * insert events. A failed round is logged and the next round tries again; the timer never keeps
 * the process alive. Stopping signs a last checkpoint, so the promise made before the service goes
 * down is as recent as it can be.
 */
export function startSealer(context: SealerContext, intervalSeconds: number): SealerLoop {
  const every = roundMs(intervalSeconds);
  const options: SealOptions = { runningSince: context.clock.now(), nextRoundMs: every };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> = Promise.resolve();
  const failed = (error: unknown) => context.logger.error({ err: error }, 'audit sealing failed; the next round retries');

  const drain = async () => {
    while (!stopped) {
      const checkpoint = await sealOnce(context, options);
      if (checkpoint === undefined || checkpoint.events < SEAL_BATCH_SIZE) return;
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      round = drain().catch(failed).finally(schedule);
    }, every);
    timer.unref();
  };
  schedule();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await round;
      // A next round "a minute away" makes the heartbeat due whatever the newest checkpoint's age.
      await sealOnce(context, { ...options, nextRoundMs: HEARTBEAT_MS }).catch(failed);
    },
  };
}
