import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { UsageError } from './errors.js';
import { createLogger, type Logger } from './logger.js';
import { closeServices, openServices } from './services.js';
import { exitOnSignals } from './shutdown.js';
import { connect } from './db/connect.js';

/** Turns the usual reasons a port cannot be taken into a message naming the settings to change. */
function listenProblem(error: unknown, config: Config): unknown {
  const code = (error as { code?: unknown }).code;
  const where = `${config.host}:${config.port}`;
  if (code === 'EADDRINUSE') return new UsageError(`cannot listen on ${where}: the address is already in use; choose another PORT (or HOST)`);
  if (code === 'EACCES') return new UsageError(`cannot listen on ${where}: permission denied; choose a PORT above 1023`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new UsageError(`cannot listen on ${where}: HOST is not an address of this machine`);
  return error;
}

/**
 * Starts the service: open and migrate the database, build the app, listen. SIGTERM and SIGINT
 * stop accepting, let in-flight requests finish (bounded by SHUTDOWN_TIMEOUT), close the
 * database and exit 0 (see exitOnSignals).
 */
export async function serve(config: Config, logger: Logger = createLogger(config.logLevel)): Promise<FastifyInstance> {
  const database = connect(config, {
    backgroundCheckpoints: { onError: (error) => logger.error({ err: error }, 'WAL checkpointer failed; SQLite checkpoints on its own') },
  });
  const services = await openServices(config, { database, logger });
  const app = await buildApp(services);
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await app.close();
    await closeServices(services);
    throw listenProblem(error, config);
  }
  exitOnSignals(
    async () => {
      await app.close();
      await closeServices(services);
    },
    { logger, timeoutSeconds: config.shutdownTimeout },
  );
  return app;
}
