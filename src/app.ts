import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { AppContext } from './auth/context.js';
import { registerBodyParser } from './http/body/decode.js';
import { clientErrorHandler, frameworkErrors } from './http/protocol-errors.js';
import { registerErrorHandler, registerNotFound } from './http/error-handler.js';
import { registerCors } from './http/plugins/cors.js';
import { registerMetrics } from './http/plugins/metrics.js';
import { registerOpenApi } from './http/plugins/openapi.js';
import { registerMeRoute } from './http/routes/me.js';
import { registerMfaEnrollRoutes } from './http/routes/mfa/enroll.js';
import { registerMfaFactorRoutes } from './http/routes/mfa/factors.js';
import { registerPasskeyRoutes } from './http/routes/mfa/passkeys.js';
import { registerPasskeyLoginRoutes } from './http/routes/passkey-login.js';
import { registerMfaVerifyRoute } from './http/routes/mfa/verify.js';
import { registerOperationRoutes } from './http/routes/operations.js';
import { registerPasswordRoute } from './http/routes/sessions/password.js';
import { registerPasswordRecoveryRoutes } from './http/routes/sessions/password-recovery.js';
import { registerRevocationRoute } from './http/routes/sessions/revocations.js';
import { registerSessionRoutes } from './http/routes/sessions/sessions.js';
import { registerRequestLifecycle } from './http/request-lifecycle.js';
import { registerScimRoutes } from './http/routes/scim/scim.js';
import { registerSsoRoutes } from './http/routes/sso/sso.js';
import { registerTokenRoutes } from './http/routes/tokens.js';
import { registerValidator } from './http/body/validator.js';
import { responseSerializerCompiler } from './http/serializer.js';
import { closeStalledAnswers } from './http/stalled-answers.js';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the HTTP application without listening, so tests use `app.inject()` on it. */
export async function buildApp(deps: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.config.bodyLimit,
    trustProxy: deps.config.trustProxy.length > 0 ? [...deps.config.trustProxy] : false,
    requestIdHeader: false,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    // Slow or endless requests must not hold a connection and its memory for long: the headers
    // within 10 s, the whole request within REQUEST_TIMEOUT, checked every second. Answers the
    // client stops reading are bounded by closeStalledAnswers below.
    requestTimeout: deps.config.requestTimeout * 1000,
    http: {
      headersTimeout: Math.min(10_000, deps.config.requestTimeout * 1000),
      connectionsCheckingInterval: 1000,
    },
    clientErrorHandler,
    frameworkErrors,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  });
  const stalledAnswers = closeStalledAnswers(app.server, deps.clock);
  app.addHook('onClose', (_app, done) => {
    stalledAnswers.stop();
    done();
  });
  registerValidator(app);
  app.setSerializerCompiler(responseSerializerCompiler);
  registerBodyParser(app);
  registerErrorHandler(app, deps);
  registerNotFound(app);
  // Metrics first, since only the routes registered after them are observed. GET /metrics is on
  // the management listener (buildManagementApp), never on this public app.
  const metrics = deps.config.metricsEnabled
    ? registerMetrics(app, { database: deps.database, hashQueue: deps.hasher.queue, databaseOutage: deps.databaseOutage, outbox: deps.outbox, clock: deps.clock })
    : undefined;
  registerRequestLifecycle(app, metrics?.observeUnmatched);
  await registerCors(app, deps.config.corsOrigins);
  await registerOpenApi(app, { docs: deps.config.docsEnabled });

  registerTokenRoutes(app, deps);
  registerSsoRoutes(app, deps);
  registerMeRoute(app, deps);
  registerMfaVerifyRoute(app, deps);
  registerMfaEnrollRoutes(app, deps);
  registerMfaFactorRoutes(app, deps);
  registerPasskeyRoutes(app, deps);
  registerPasskeyLoginRoutes(app, deps);
  registerSessionRoutes(app, deps);
  registerPasswordRoute(app, deps);
  const recoveries = registerPasswordRecoveryRoutes(app, deps);
  // Closing waits for the recovery requests already answered, so none is cut off halfway.
  app.addHook('onClose', () => recoveries.idle());
  registerRevocationRoute(app, deps);
  registerOperationRoutes(app, deps);
  await registerScimRoutes(app, deps);
  await app.ready();
  return app;
}
