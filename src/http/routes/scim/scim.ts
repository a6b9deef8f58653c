import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../../auth/context.js';
import { ScimError, scimErrorBody } from '../../../auth/scim/scim-error.js';
import { authenticateScimToken, type ScimClient } from '../../../auth/scim/scim-tokens.js';
import { isDatabaseUnavailable } from '../../../db/errors.js';
import { AppError } from '../../../errors.js';
import { JsonText } from '../../body/decode.js';
import { ValidationFailure } from '../../body/validation-failure.js';
import { TAG } from '../../plugins/docs-tags.js';
import { ScimThrottle } from './scim-throttle.js';
import { registerDiscoveryRoutes } from './discovery.js';
import { registerUserRoutes } from './users.js';

export const SCIM_MEDIA_TYPE = 'application/scim+json; charset=utf-8';
/** A User is a few KiB at most; a sync sends one at a time. */
const BODY_LIMIT = 65_536;

const clients = new WeakMap<FastifyRequest, ScimClient>();

/** The SCIM client the request's bearer token stands for (set by the scope's onRequest hook). */
export function scimClientOf(request: FastifyRequest): ScimClient {
  const client = clients.get(request);
  if (client === undefined) throw new ScimError(401, undefined, 'A SCIM bearer token is required');
  return client;
}

/** The body as JSON: what the SCIM handlers read. A body that is not JSON is SCIM's invalidSyntax. */
export function scimBody(request: FastifyRequest): unknown {
  const { body } = request;
  if (!(body instanceof JsonText)) throw new ScimError(400, 'invalidSyntax', 'the body must be JSON sent as application/scim+json or application/json');
  try {
    return JSON.parse(body.text) as unknown;
  } catch {
    throw new ScimError(400, 'invalidSyntax', 'the body is not valid JSON');
  }
}

const ScimJson = (description: string) => ({ description, type: 'object', additionalProperties: true });

/** The route documentation every SCIM operation shares: its tag, the token, SCIM's error answers. */
export function scimDoc(summary: string, success: Record<number, string>, extra: Record<string, unknown> = {}) {
  const answers = Object.fromEntries(Object.entries(success).map(([status, description]) => [status, status === '204' ? { description, type: 'null' } : ScimJson(description)]));
  const errors = { '4xx': ScimJson('A SCIM error (RFC 7644 §3.12): status, scimType, detail'), 503: ScimJson('The database is unreachable; Retry-After') };
  return { schema: { summary, tags: [TAG.scim], security: [{ scimToken: [] }], response: { ...answers, ...errors }, ...extra } };
}

export function sendScim(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).type(SCIM_MEDIA_TYPE).header('cache-control', 'no-store').send(JSON.stringify(body));
}

function asScimError(error: FastifyError): ScimError | undefined {
  if (error instanceof ScimError) return error;
  if (error instanceof ValidationFailure) return new ScimError(400, 'invalidValue', 'a path or query parameter is invalid');
  if (error instanceof AppError && error.code === 'BODY_UNPARSABLE') return new ScimError(400, 'invalidSyntax', 'the body is not UTF-8 text');
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ScimError(413, undefined, `the body is larger than ${BODY_LIMIT} bytes`);
  if (isDatabaseUnavailable(error)) return new ScimError(503, undefined, 'Service temporarily unavailable');
  return undefined;
}

async function authenticate(deps: AppContext, throttle: ScimThrottle, request: FastifyRequest): Promise<void> {
  const header = request.headers.authorization ?? '';
  const match = /^Bearer +(\S+)$/i.exec(header);
  const client = match?.[1] === undefined ? undefined : await authenticateScimToken(deps, match[1]);
  if (client === undefined) throw new ScimError(401, undefined, 'A valid SCIM bearer token is required');
  if (!throttle.take(client.tokenId)) throw new ScimError(429, undefined, 'Too many requests for this token; slow down');
  clients.set(request, client);
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

export { BODY_LIMIT as SCIM_BODY_LIMIT };
