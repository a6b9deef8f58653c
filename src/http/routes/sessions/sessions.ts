import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { listOwnSessions, revokeOtherSessions, revokeOwnSession } from '../../../auth/sessions/own-sessions.js';
import type { AppContext } from '../../../auth/context.js';
import { claimsOf, requireBearer } from '../../bearer-auth.js';
import { TAG } from '../../plugins/docs-tags.js';
import { noStore, requestContext } from '../../request-context.js';
import { ErrorBodies } from '../schemas.js';
import { SessionErrorBodies, SessionIdParams, SessionsResponse } from './schemas.js';

const isoSeconds = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

const bearerErrors = { 401: ErrorBodies.invalidAccessToken, 503: ErrorBodies.unavailable };
const ended = { type: 'null', description: 'Ended' } as const;

/** Self-service sessions: an admin sees and ends their own sessions with their access token. */
export function registerSessionRoutes(app: FastifyInstance, deps: AppContext): void {
  const common = { tags: [TAG.sessions], security: [{ bearerAuth: [] }] };
  const preValidation = requireBearer(deps);

  app.get(
    '/admin/auth/sessions',
    { preValidation, schema: { ...common, summary: 'List your own live sessions', response: { 200: SessionsResponse, ...bearerErrors } } },
    async (request, reply) => {
      const sessions = await listOwnSessions(deps, claimsOf(request));
      return noStore(reply).send({
        sessions: sessions.map((session) => ({
          session_id: session.sessionId,
          created_at: isoSeconds(session.createdAt),
          last_used_at: isoSeconds(session.lastUsedAt),
          ip: session.ip,
          user_agent: session.userAgent,
          acr: session.acr,
          amr: session.amr,
          current: session.current,
        })),
      });
    },
  );

  app.delete<{ Params: Static<typeof SessionIdParams> }>(
    '/admin/auth/sessions/:session_id',
    {
      preValidation,
      schema: {
        ...common,
        summary: 'End one of your own sessions (sign out a lost device)',
        params: SessionIdParams,
        response: { 204: ended, 404: SessionErrorBodies.sessionNotFound, ...bearerErrors },
      },
    },
    async (request, reply) => {
      await revokeOwnSession(deps, claimsOf(request), request.params.session_id, requestContext(request));
      return reply.code(204).send();
    },
  );

  app.post(
    '/admin/auth/sessions/revoke-others',
    {
      preValidation,
      schema: { ...common, summary: 'End all your sessions but this one', response: { 204: ended, ...bearerErrors } },
    },
    async (request, reply) => {
      await revokeOtherSessions(deps, claimsOf(request), requestContext(request));
      return reply.code(204).send();
    },
  );
}
