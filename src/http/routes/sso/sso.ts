import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../../../auth/context.js';
import { CALLBACK_FAILURE_WINDOW, finishSsoCallback } from '../../../auth/sso/callback.js';
import { backchannelLogout } from '../../../auth/sso/backchannel-logout.js';
import { startSso } from '../../../auth/sso/start.js';
import { RawBody } from '../../body/fastapi-validation.js';
import { exchangeLoginCode } from '../../../auth/sso/token-exchange.js';
import { AppError } from '../../../errors.js';
import { TAG } from '../../plugins/docs-tags.js';
import { requestContext } from '../../request-context.js';
import { SecondFactorRequired } from '../mfa/schemas.js';
import { sendLoginAnswer } from '../login-answer.js';
import { ErrorBodies, LoginResponse, bodyErrors } from '../schemas.js';
import { SsoCallbackQuery, SsoErrorBodies, SsoRedirects, SsoStartParams, SsoStartQuery, SsoTokenBody } from './schemas.js';

/** A query parameter given once, as text; repeated or absent parameters count as absent. */
function single(query: unknown, name: string): string | undefined {
  const value = (query as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/** Redirects in this flow carry a state or a login code: never cached, never sent on as a Referer. */
function redirectTo(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(302).header('location', location).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').send();
}

/** The three steps of sign-in with the school's identity provider (docs/sso.md). */
export function registerSsoRoutes(app: FastifyInstance, deps: AppContext): void {
  app.get<{ Params: Static<typeof SsoStartParams> }>(
    '/admin/auth/sso/:school_id/start',
    {
      config: { ssoBrowserStep: 'start' },
      schema: {
        summary: "Start signing in with the school's identity provider (a browser navigation)",
        tags: [TAG.signIn],
        params: SsoStartParams,
        querystring: SsoStartQuery,
        response: { 302: SsoRedirects.toIdp, 400: SsoErrorBodies.badRedirect, 404: SsoErrorBodies.notSetUp, 503: ErrorBodies.unavailable },
      },
    },
    async (request, reply) => {
      const location = await startSso(deps, {
        schoolId: request.params.school_id,
        redirectUri: single(request.query, 'redirect_uri'),
        codeChallenge: single(request.query, 'code_challenge'),
        codeChallengeMethod: single(request.query, 'code_challenge_method'),
      });
      return redirectTo(reply, location);
    },
  );

  app.get(
    '/admin/auth/sso/callback',
    {
      config: { ssoBrowserStep: 'callback' },
      schema: {
        summary: "The identity provider's redirect back (register <PUBLIC_URL>/admin/auth/sso/callback at the IdP)",
        tags: [TAG.signIn],
        querystring: SsoCallbackQuery,
        response: { 302: SsoRedirects.toFrontEnd, 400: SsoErrorBodies.badState, 429: SsoErrorBodies.throttled, 503: ErrorBodies.unavailable },
      },
    },
    async (request, reply) => {
      const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
      const answer = await finishSsoCallback(deps, query, requestContext(request)).catch((error: unknown) => {
        if (error instanceof AppError && error.code === 'SSO_CALLBACK_THROTTLED') {
          throw new AppError('SSO_CALLBACK_THROTTLED', { headers: { 'retry-after': String(CALLBACK_FAILURE_WINDOW) } });
        }
        throw error;
      });
      return redirectTo(reply, answer.location);
    },
  );

  app.post(
    '/admin/auth/sso/backchannel-logout',
    {
      schema: {
        summary: 'OpenID Connect Back-Channel Logout 1.0: the IdP ends the sessions of an identity (register this URI at the IdP)',
        description: 'Body `application/x-www-form-urlencoded` with `logout_token`, a JWT signed by the school IdP, audience our client id.',
        tags: [TAG.signIn],
        response: { 200: { type: 'null', description: 'The sessions of that identity (or IdP session) ended' }, 400: SsoErrorBodies.badLogoutToken, 503: ErrorBodies.unavailable },
      },
    },
    async (request, reply) => {
      const text = request.body instanceof RawBody ? request.body.text : '';
      const token = new URLSearchParams(text).get('logout_token') ?? '';
      if (token.length === 0 || token.length > 8192 || !(await backchannelLogout(deps, token, requestContext(request)))) throw new AppError('SSO_LOGOUT_TOKEN_INVALID');
      return reply.code(200).header('cache-control', 'no-store').send();
    },
  );

  app.post<{ Body: Static<typeof SsoTokenBody> }>(
    '/admin/auth/sso/token',
    {
      config: { signIn: true, attemptCounter: 'ssoExchanges' },
      schema: {
        summary: 'Exchange the login code and PKCE verifier for tokens (answers exactly as a login does)',
        tags: [TAG.signIn],
        body: SsoTokenBody,
        response: { 200: LoginResponse, ...bodyErrors({ 401: SsoErrorBodies.invalidCode, 403: SecondFactorRequired }) },
      },
    },
    async (request, reply) => {
      const result = await exchangeLoginCode(deps, request.body.code, request.body.code_verifier, requestContext(request));
      return sendLoginAnswer(reply, result);
    },
  );
}
