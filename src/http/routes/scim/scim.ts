import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../../../auth/context.js';
import { ScimError, scimErrorBody } from '../../../auth/scim/scim-error.js';
import { authenticateScimToken } from '../../../auth/scim/scim-tokens.js';
import { isDatabaseUnavailable } from '../../../db/errors.js';
import { AppError } from '../../../errors.js';
import { ValidationFailure } from '../../body/validation-failure.js';
import { SCIM_BODY_LIMIT, sendScim, setScimClient } from './scim-exchange.js';
import { ScimThrottle } from './scim-throttle.js';
import { registerDiscoveryRoutes } from './discovery.js';
import { registerUserRoutes } from './users.js';

function asScimError(error: FastifyError): ScimError | undefined {
  if (error instanceof ScimError) return error;
  if (error instanceof ValidationFailure) return new ScimError(400, 'invalidValue', 'a path or query parameter is invalid');
  if (error instanceof AppError && error.code === 'BODY_UNPARSABLE') return new ScimError(400, 'invalidSyntax', 'the body is not UTF-8 text');
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ScimError(413, undefined, `the body is larger than ${SCIM_BODY_LIMIT} bytes`);
  if (isDatabaseUnavailable(error)) return new ScimError(503, undefined, 'Service temporarily unavailable');
  return undefined;
}

async function authenticate(deps: AppContext, throttle: ScimThrottle, request: FastifyRequest): Promise<void> {
  const header = request.headers.authorization ?? '';
  const match = /^Bearer +(\S+)$/i.exec(header);
  const client = match?.[1] === undefined ? undefined : await authenticateScimToken(deps, match[1]);
  if (client === undefined) throw new ScimError(401, undefined, 'A valid SCIM bearer token is required');
  if (!throttle.take(client.tokenId)) throw new ScimError(429, undefined, 'Too many requests for this token; slow down');
  setScimClient(request, client);
}

/**
 * SCIM 2.0 at `/scim/v2` (RFC 7644), in a scope of its own: its errors are SCIM's error schema,
 * every request needs a school's bearer token, and the token acts on its own school only.
 */
export async function registerScimRoutes(app: FastifyInstance, deps: AppContext): Promise<void> {
  const throttle = new ScimThrottle(deps.clock);
  const base = `${deps.config.sso.publicUrl.replace(/\/+$/, '')}/scim/v2`;
  await app.register(
    (scope, _options, done) => {
      scope.addHook('onRequest', (request) => authenticate(deps, throttle, request));
      scope.setErrorHandler((error: FastifyError, request, reply) => {
        const known = asScimError(error);
        if (known === undefined) request.log.error({ err: error }, 'unhandled error');
        const answer = known ?? new ScimError(500, undefined, 'Internal Server Error');
        if (answer.status === 401) void reply.header('www-authenticate', 'Bearer realm="scim"');
        if (answer.status === 429) void reply.header('retry-after', '1');
        if (answer.status === 503) void reply.header('retry-after', '5');
        return sendScim(reply, answer.status, scimErrorBody(answer));
      });
      scope.setNotFoundHandler((request, reply) =>
        sendScim(reply, 404, scimErrorBody(new ScimError(404, undefined, `${request.url.split('?', 1)[0] ?? ''} is not a resource of this service; Users is (Groups are not offered)`))),
      );
      registerUserRoutes(scope, deps, base);
      registerDiscoveryRoutes(scope, base);
      done();
    },
    { prefix: '/scim/v2' },
  );
}

