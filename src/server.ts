import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { createLogger, type Logger } from './logger.js';
import { openServices } from './services.js';

/**
 * Starts the service: open and migrate the database, build the app, listen. SIGTERM and SIGINT
 * stop accepting, let in-flight requests finish (bounded by SHUTDOWN_TIMEOUT), close the
 * database and exit 0.
 */
export async function serve(config: Config, logger: Logger = createLogger(config.logLevel)): Promise<FastifyInstance> {
  const services = await openServices(config);
  const app = await buildApp({ ...services, logger });
  await app.listen({ host: config.host, port: config.port });
  const shutdown = (signal: string) => {
    logger.info({ signal }, 'shutting down: draining in-flight requests');
    const timer = setTimeout(() => {
      logger.error('shutdown timed out; exiting with requests still open');
      process.exit(1);
    }, config.shutdownTimeout * 1000);
    timer.unref();
    app
      .close()
      .then(() => services.database.close())
      .then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  return app;
}
