import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { AppContext } from '../auth/context.js';
import { registerErrorHandler, registerNotFound } from './error-handler.js';
import { metricsOf } from './plugins/metrics.js';
import { registerHealthRoutes } from './routes/operations.js';

/**
 * The management listener's app (MANAGEMENT_HOST:MANAGEMENT_PORT, as Keycloak's management
 * interface): /metrics, /healthz and /readyz, for Prometheus and orchestrators. Kept off the
 * public port because the metrics tell anyone who can reach the login endpoint how logins fare.
 */
export async function buildManagementApp(deps: AppContext, publicApp: FastifyInstance): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger,
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  });
  registerErrorHandler(app, deps);
  registerNotFound(app);
  registerHealthRoutes(app, deps);
  metricsOf(publicApp)?.addRoute(app);
  await app.ready();
  return app;
}
