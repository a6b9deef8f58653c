import { createHash } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { createRevocationReader } from '../../../auth/sessions/revocation-feed-cache.js';
import type { AppContext } from '../../../auth/context.js';
import { TAG } from '../../plugins/docs-tags.js';
import { ErrorBodies } from '../schemas.js';
import { RevocationsQuery, RevocationsResponse, SessionErrorBodies } from './schemas.js';

/** Verifiers poll every 10 s by default: a few seconds of caching spares the database, not the bound. */
const CACHE_CONTROL = 'public, max-age=5';

/** Whether an If-None-Match header names `etag` (or `*`); weak comparison, as RFC 9110 asks for GET. */
function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const candidate = tag.trim().replace(/^W\//, '');
    return candidate === '*' || candidate === etag;
  });
}

/** GET /auth/revocations: the sessions whose access tokens the platform's services must refuse. Public, like the JWKS. */
export function registerRevocationRoute(app: FastifyInstance, deps: AppContext): void {
  const readRevocations = createRevocationReader(deps);
  app.get<{ Querystring: Static<typeof RevocationsQuery> }>(
    '/auth/revocations',
    {
      schema: {
        summary: 'Sessions ended within the longest access-token lifetime, for the platform’s verifiers',
        description:
          'Without `since`: the sessions ended within ACCESS_TOKEN_TTL + 60 s, in the order they ended (this answer is computed at ' +
          'most once every 2 s). With `since=<cursor>`: only those ended after it. At most 1000 sids per answer: while `has_more` ' +
          'is true, ask again with `since=<cursor>`. ETag / If-None-Match answers 304; Cache-Control: public, max-age=5.',
        tags: [TAG.keys],
        querystring: RevocationsQuery,
        response: {
          200: RevocationsResponse,
          304: { type: 'null', description: 'Not modified since the ETag in If-None-Match' },
          400: SessionErrorBodies.invalidCursor,
          503: ErrorBodies.unavailable,
        },
      },
    },
    async (request, reply) => {
      const page = await readRevocations(request.query.since);
      const body = JSON.stringify({ sids: page.sids, cursor: page.cursor, has_more: page.has_more });
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
      reply.header('cache-control', CACHE_CONTROL).header('etag', etag);
      if (matches(request.headers['if-none-match'], etag)) return reply.code(304).send();
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );
}
