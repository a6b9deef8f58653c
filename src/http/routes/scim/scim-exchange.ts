import type { FastifyReply, FastifyRequest } from 'fastify';
import { ScimError } from '../../../auth/scim/scim-error.js';
import type { ScimClient } from '../../../auth/scim/scim-tokens.js';
import { JsonText } from '../../body/decode.js';
import { TAG } from '../../plugins/docs-tags.js';

// What every SCIM route shares: the client its token stands for, the body as JSON, the answer's
// media type, and the documentation of its answers.

export const SCIM_MEDIA_TYPE = 'application/scim+json; charset=utf-8';
/** A User is a few KiB at most; a sync sends one at a time. */
export const SCIM_BODY_LIMIT = 65_536;

const clients = new WeakMap<FastifyRequest, ScimClient>();

/** Set by the scope's onRequest hook once the token is checked. */
export function setScimClient(request: FastifyRequest, client: ScimClient): void {
  clients.set(request, client);
}

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
