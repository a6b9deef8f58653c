import type { AppContext } from '../context.js';
import { SEAL_BATCH_SIZE, sealBatch, type SealedCheckpoint } from './sealer.js';

export interface SealerLoop {
  /** Stops after the batch in progress, if any, has committed or rolled back. */
  stop(): Promise<void>;
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

/**
 * Seals in the background every `intervalSeconds` (AUDIT_SEAL_INTERVAL), draining whatever is
 * waiting in batches. Logins and refreshes never wait for it: they only insert events. A failed
 * round is logged and the next round tries again; the timer never keeps the process alive.
 */
export function startSealer(context: Pick<AppContext, 'db' | 'clock' | 'keys' | 'logger'>, intervalSeconds: number): SealerLoop {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> = Promise.resolve();

  const drain = async () => {
    while (!stopped) {
      const checkpoint = await sealBatch(context);
      if (checkpoint === undefined) return;
      logCheckpoint(context.logger, checkpoint);
      if (checkpoint.events < SEAL_BATCH_SIZE) return;
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      round = drain()
        .catch((error: unknown) => context.logger.error({ err: error }, 'audit sealing failed; the next round retries'))
        .finally(schedule);
    }, intervalSeconds * 1000);
    timer.unref();
  };
  schedule();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await round;
    },
  };
}
