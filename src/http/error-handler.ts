import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../auth/context.js';
import { KeyEncryptionError } from '../auth/keys/key-encryption.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import { AppError, catalogue } from '../errors.js';
import { keepOpenToDrain } from './body/oversized-body.js';
import { ValidationFailure } from './body/validation-failure.js';
import { DeclaredPaths, redirectToSlashTwin } from './trailing-slash.js';

/** Fastify's own client errors and database outages, mapped onto the catalogue. */
function classify(error: FastifyError): AppError | undefined {
  if (isDatabaseUnavailable(error)) return new AppError('UNAVAILABLE', { cause: error });
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new AppError('BODY_TOO_LARGE', { cause: error });
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return new AppError('BODY_UNPARSABLE', { cause: error });
  return undefined;
}

/**
 * The one place that decides what a client may see: catalogue errors and validation items go
 * out as they are; a sealed secret this instance cannot open is a configuration to fix, not a
 * bug: 503, reported once to `sealedSecrets`; a database outage is expected, not a bug: 503,
 * reported to `databaseOutage`, which logs its beginning and end rather than each request;
 * anything else is a bug, logged with its cause and answered with a bare 500.
 */
export function registerErrorHandler(app: FastifyInstance, watches: Pick<AppContext, 'sealedSecrets' | 'databaseOutage'>): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof ValidationFailure) return reply.code(422).type('application/json; charset=utf-8').send(error.body);
    if (error instanceof KeyEncryptionError) {
      watches.sealedSecrets.report(error, request.log);
      const unavailable = new AppError('UNAVAILABLE');
      return reply.code(unavailable.status).headers(unavailable.headers).send({ detail: unavailable.detail });
    }
    const known = error instanceof AppError ? error : classify(error);
    if (known === undefined) {
      request.log.error({ err: error }, 'unhandled error');
      return reply.code(500).send({ detail: catalogue.INTERNAL.detail });
    }
    if (known.code === 'UNAVAILABLE' && isDatabaseUnavailable(known.cause)) watches.databaseOutage.refused(known.cause);
    else if (known.status >= 500) request.log.warn({ err: known.cause ?? known }, 'request refused: service unavailable');
    if (known.code === 'BODY_TOO_LARGE') keepOpenToDrain(request, reply);
    return reply.code(known.status).headers(known.headers).send({ detail: known.detail });
  });
}

/**
 * 405 with `Allow` for a known path and another method; else, as Starlette, 307 to the path's
 * trailing-slash twin when that has a route; else 404.
 */
export function registerNotFound(app: FastifyInstance): void {
  const methodsByPath = new Map<string, Set<string>>();
  const declaredPaths = new DeclaredPaths();
  app.addHook('onRoute', (route) => {
    const methods = methodsByPath.get(route.url) ?? new Set<string>();
    const declared = [route.method].flat();
    for (const method of declared) methods.add(method);
    methodsByPath.set(route.url, methods);
    declaredPaths.add(route.url, declared);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?', 1)[0] ?? '';
    const methods = methodsByPath.get(path);
    if (methods === undefined && redirectToSlashTwin(request, reply, declaredPaths)) return reply;
    if (methods === undefined) return reply.code(404).send({ detail: catalogue.NOT_FOUND.detail });
    return reply
      .code(405)
      .header('allow', [...methods].sort().join(', '))
      .send({ detail: 'Method Not Allowed' });
  });
}
