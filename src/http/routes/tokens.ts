import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../auth/context.js';
import { login } from '../../auth/sign-in/login.js';
import { logout } from '../../auth/sessions/logout.js';
import { exchangeRefreshToken } from '../../auth/sessions/refresh.js';
import { noStore, requestContext } from '../request-context.js';
import { TAG } from '../plugins/docs-tags.js';
import { LoginForbidden } from './sso/schemas.js';
import { sendLoginAnswer } from './login-answer.js';
import { ErrorBodies, LoginBody, LoginResponse, RefreshResponse, RefreshTokenBody, bodyErrors } from './schemas.js';

/** The two contract endpoints and logout: parse, call the domain, send. */
export function registerTokenRoutes(app: FastifyInstance, deps: AppContext): void {
  app.post<{ Body: Static<typeof LoginBody> }>(
    '/admin/auth/login',
    {
      config: { contractBody: true, signIn: true, attemptCounter: 'logins' },
      schema: {
        summary: 'Sign in as a school administrator',
        tags: [TAG.signIn],
        body: LoginBody,
        response: { 200: LoginResponse, ...bodyErrors({ 401: ErrorBodies.loginRefused, 403: LoginForbidden, 429: ErrorBodies.throttled }) },
      },
    },
    async (request, reply) => {
      const { school_id, username, password } = request.body;
      const result = await login(deps, { schoolId: school_id, username, password }, requestContext(request));
      return sendLoginAnswer(reply, result);
    },
  );

  app.post<{ Body: Static<typeof RefreshTokenBody> }>(
    '/auth/refresh',
    {
      config: { contractBody: true, attemptCounter: 'refreshes' },
      schema: {
        summary: 'Exchange a refresh token for a new access token',
        tags: [TAG.signIn],
        body: RefreshTokenBody,
        response: { 200: RefreshResponse, ...bodyErrors({ 401: ErrorBodies.invalidRefreshToken }) },
      },
    },
    async (request, reply) => {
      const result = await exchangeRefreshToken(deps, request.body.refresh_token, requestContext(request));
      return noStore(reply).send({
        access_token: result.accessToken,
        expires_in: result.expiresIn,
        token_type: 'bearer',
        ...(result.refreshToken === undefined
          ? {}
          : { refresh_token: result.refreshToken, refresh_expires_in: result.refreshExpiresIn }),
      });
    },
  );

  app.post<{ Body: Static<typeof RefreshTokenBody> }>(
    '/auth/logout',
    {
      config: { contractBody: true },
      schema: {
        summary: 'End the session of a refresh token (204 whether or not it was valid)',
        tags: [TAG.signIn],
        body: RefreshTokenBody,
        response: { 204: { type: 'null', description: 'Session ended, or token unknown' }, ...bodyErrors() },
      },
    },
    async (request, reply) => {
      await logout(deps, request.body.refresh_token, requestContext(request));
      return reply.code(204).send();
    },
  );
}
