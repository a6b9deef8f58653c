import type { FastifyInstance } from 'fastify';
import { authenticateAccessToken } from '../../auth/sessions/current-admin.js';
import type { AppContext } from '../../auth/context.js';
import { AppError } from '../../errors.js';
import { TAG } from '../plugins/docs-tags.js';
import { ErrorBodies, MeResponse } from './schemas.js';

/** The bearer token of an Authorization header; anything else is no credential at all. */
export function bearerToken(header: string | undefined): string {
  const match = header === undefined ? null : /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(header);
  if (match?.[1] === undefined) throw new AppError('INVALID_ACCESS_TOKEN');
  return match[1];
}

export function registerMeRoute(app: FastifyInstance, deps: AppContext): void {
  app.get(
    '/admin/auth/me',
    {
      schema: {
        summary: 'Who the bearer access token belongs to',
        tags: [TAG.sessions],
        security: [{ bearerAuth: [] }],
        response: { 200: MeResponse, 401: ErrorBodies.invalidAccessToken, 503: ErrorBodies.unavailable },
      },
    },
    async (request) => {
      const claims = await authenticateAccessToken(deps, bearerToken(request.headers.authorization));
      return {
        sub: claims.sub,
        school_id: claims.school_id,
        username: claims.username,
        sid: claims.sid,
        iat: claims.iat,
        exp: claims.exp,
        acr: claims.acr,
        amr: claims.amr,
      };
    },
  );
}
