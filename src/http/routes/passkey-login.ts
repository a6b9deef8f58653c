import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../auth/context.js';
import { passkeyLogin, passkeyLoginOptions } from '../../auth/sign-in/passkey-login.js';
import { TAG } from '../plugins/docs-tags.js';
import { noStore, requestContext } from '../request-context.js';
import { sendLoginAnswer } from './login-answer.js';
import { PasskeyLoginOptions, credentialSchema } from './mfa/passkey-schemas.js';
import { ErrorBodies, LIMITS, LoginResponse, bodyErrors, errorBody } from './schemas.js';

const off = errorBody('Passkeys are off: the operator has not set WEBAUTHN_RP_ID', 'Passkeys are not enabled on this server');

const OptionsBody = Type.Union([
  Type.Object({
    school_id: Type.Optional(Type.String({ maxLength: LIMITS.school_id, description: "Only this school's admins may answer the challenge; answered alike whether it exists or not" })),
  }),
  Type.Null(),
]);

const LoginBody = Type.Object({
  credential: credentialSchema('The result of navigator.credentials.get(), as credential.toJSON(); its user handle names the admin'),
});

/** Sign-in with a passkey alone: usernameless, the browser offers the admin's discoverable passkeys. */
export function registerPasskeyLoginRoutes(app: FastifyInstance, deps: AppContext): void {
  app.post<{ Body: Static<typeof OptionsBody> | undefined }>(
    '/admin/auth/passkey/options',
    {
      schema: {
        summary: 'Request options for signing in with a passkey alone (navigator.credentials.get(), also with mediation "conditional")',
        tags: [TAG.signIn],
        body: OptionsBody,
        response: { 200: PasskeyLoginOptions, ...bodyErrors({ 404: off }) },
      },
    },
    async (request, reply) => noStore(reply).send(await passkeyLoginOptions(deps, request.body?.school_id)),
  );

  app.post<{ Body: Static<typeof LoginBody> }>(
    '/admin/auth/passkey/login',
    {
      config: { attemptCounter: 'passkeyLogins' },
      schema: {
        summary: 'Sign in with a passkey alone (answers exactly as a login does)',
        tags: [TAG.signIn],
        body: LoginBody,
        response: { 200: LoginResponse, ...bodyErrors({ 401: ErrorBodies.loginRefused, 404: off, 429: ErrorBodies.throttled, 503: ErrorBodies.unavailable }) },
      },
    },
    async (request, reply) => sendLoginAnswer(reply, await passkeyLogin(deps, request.body.credential, requestContext(request))),
  );
}
