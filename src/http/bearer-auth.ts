import type { FastifyRequest } from 'fastify';
import type { AccessTokenClaims } from '../auth/keys/access-token.js';
import { authenticateSelfService } from '../auth/sessions/self-service-auth.js';
import type { AppContext } from '../auth/context.js';
import { AppError } from '../errors.js';
import { bearerToken } from './routes/me.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified access token of a self-service request, set by requireBearer. */
    adminClaims?: AccessTokenClaims;
  }
}

/**
 * A preValidation hook for the self-service routes: the bearer token is checked before the body,
 * so without a valid token of a live session nothing about the body is answered (as FastAPI's
 * security dependencies run before body validation). An admin with a second factor needs an aal2 token.
 */
export function requireBearer(deps: AppContext) {
  return async (request: FastifyRequest): Promise<void> => {
    request.adminClaims = await authenticateSelfService(deps, bearerToken(request.headers.authorization));
  };
}

/** The claims requireBearer put on the request; a route without the hook is a programming error. */
export function claimsOf(request: FastifyRequest): AccessTokenClaims {
  if (request.adminClaims === undefined) throw new AppError('INVALID_ACCESS_TOKEN');
  return request.adminClaims;
}
