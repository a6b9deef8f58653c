import type { Logger } from './logger.js';

/**
 * SIGTERM and SIGINT run `close` once, then exit 0 (1 if closing failed or took longer than
 * `timeoutSeconds`). Later signals are only logged: Ctrl-C under `npm start` reaches the server
 * twice (from the terminal, and forwarded by npm), and a second signal must not cut the drain short.
 */
export function exitOnSignals(close: () => Promise<void>, options: { logger: Logger; timeoutSeconds: number }): void {
  const { logger } = options;
  let closing = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) {
      logger.info({ signal }, 'already shutting down: still draining in-flight requests');
      return;
    }
    closing = true;
    logger.info({ signal }, 'shutting down: draining in-flight requests');
    const timer = setTimeout(() => {
      logger.error('shutdown timed out; exiting with requests still open');
      process.exit(1);
    }, options.timeoutSeconds * 1000);
    timer.unref();
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
