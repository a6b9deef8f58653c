import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config/config.js';
import { UsageError } from './errors.js';
import { buildManagementApp } from './http/management-app.js';
import { createLogger, type Logger } from './runtime/logger.js';
import { closeServices, openServices } from './services.js';
import { exitOnSignals } from './runtime/shutdown.js';
import { connect } from './db/connect.js';
import { describeDatabase } from './db/database-target.js';
import { PACKAGE_VERSION } from './package-version.js';
import { startSealer } from './auth/audit/sealer-loop.js';
import { startDelivery } from './delivery/delivery-loop.js';

interface Listener {
  readonly host: string;
  readonly port: number;
  /** The variables that choose this address, for messages: PORT and HOST, or MANAGEMENT_*. */
  readonly prefix: '' | 'MANAGEMENT_';
}

/** Turns the usual reasons a port cannot be taken into a message naming the settings to change. */
function listenProblem(error: unknown, { host, port, prefix }: Listener): unknown {
  const code = (error as { code?: unknown }).code;
  const where = `${host}:${port}`;
  if (code === 'EADDRINUSE') return new UsageError(`cannot listen on ${where}: the address is already in use; choose another ${prefix}PORT (or ${prefix}HOST)`);
  if (code === 'EACCES') return new UsageError(`cannot listen on ${where}: permission denied; choose a ${prefix}PORT above 1023`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new UsageError(`cannot listen on ${where}: ${prefix}HOST is not an address of this machine`);
  return error;
}

async function listen(app: FastifyInstance, listener: Listener): Promise<void> {
  try {
    await app.listen({ host: listener.host, port: listener.port });
  } catch (error) {
    throw listenProblem(error, listener);
  }
}

/**
 * Starts the service: open and migrate the database, build the public app and the management
 * app, start the audit sealer and the notification delivery, listen on both. SIGTERM and SIGINT stop accepting, let in-flight
 * requests finish (bounded by SHUTDOWN_TIMEOUT), stop the sealer after its batch, close the database and exit 0 (see exitOnSignals).
 */
export async function serve(config: Config, logger: Logger = createLogger(config.logLevel)): Promise<FastifyInstance> {
  const database = connect(config, {
    backgroundCheckpoints: { onError: (error) => logger.error({ err: error }, 'WAL checkpointer failed; SQLite checkpoints on its own') },
    checkPages: true,
  });
  const services = await openServices(config, { database, logger });
  const app = await buildApp(services);
  const management = config.management === undefined ? undefined : await buildManagementApp(services, app);
  const sealer = startSealer(services, config.auditSealInterval);
  const delivery = startDelivery(services, services.outbox);
  const close = async () => {
    await Promise.all([app.close(), management?.close()]);
    await Promise.all([sealer.stop(), delivery.stop()]);
    await closeServices(services);
  };
  try {
    if (management !== undefined && config.management !== undefined) await listen(management, { ...config.management, prefix: 'MANAGEMENT_' });
    await listen(app, { host: config.host, port: config.port, prefix: '' });
  } catch (error) {
    await close();
    throw error;
  }
  exitOnSignals(close, { logger, timeoutSeconds: config.shutdownTimeout });
  logger.info(
    {
      version: PACKAGE_VERSION,
      database: describeDatabase(config),
      issuer: config.issuer,
      address: addressOf(app),
      management_address: management === undefined ? null : addressOf(management),
    },
    'school-auth started',
  );
  return app;
}

/** Where an app listens, as a URL (the port the system chose when PORT=0). */
function addressOf(app: FastifyInstance): string {
  const address = app.server.address();
  if (address === null || typeof address === 'string') return String(address);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
