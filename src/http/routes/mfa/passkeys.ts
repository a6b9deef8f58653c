import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { authenticateMfaPrincipal } from '../../../auth/mfa/principal.js';
import { passkeyRegistrationOptions, registerPasskey } from '../../../auth/mfa/passkey-registration.js';
import { passkeySignInOptions } from '../../../auth/mfa/passkey-sign-in.js';
import type { AppContext } from '../../../auth/context.js';
import { FactorConfirmed, MfaErrorBodies } from './schemas.js';
import { PasskeyCreationOptions, PasskeyRegistrationBody, PasskeyRequestOptions, PasskeySignInBody } from './passkey-schemas.js';
import { TAG } from '../../plugins/docs-tags.js';
import { noStore, requestContext } from '../../request-context.js';
import { ErrorBodies, bodyErrors, errorBody } from '../schemas.js';
import { loginBody } from '../login-answer.js';
import { bearerToken } from '../me.js';

const off = errorBody('Passkeys are off: the operator has not set WEBAUTHN_RP_ID', 'Passkeys are not enabled on this server');
const bearerErrors = { 401: MfaErrorBodies.stepUp, 404: off, 503: ErrorBodies.unavailable };
const refused = errorBody(
  'The body is not JSON, or the passkey did not verify: unknown or used challenge, another origin or RP ID, no user verification, a key already registered',
  'Passkey registration failed',
);

/** Passkeys and security keys (WebAuthn): registration with a bearer, sign-in options with an mfa_token. */
export function registerPasskeyRoutes(app: FastifyInstance, deps: AppContext): void {
  app.post(
    '/admin/auth/mfa/webauthn/registration-options',
    {
      schema: {
        summary: 'Start registering a passkey or security key: creation options for navigator.credentials.create()',
        tags: [TAG.mfa],
        security: [{ bearerAuth: [] }],
        response: { 200: PasskeyCreationOptions, ...bearerErrors },
      },
    },
    async (request, reply) => {
      const principal = await authenticateMfaPrincipal(deps, bearerToken(request.headers.authorization));
      return noStore(reply).send(await passkeyRegistrationOptions(deps, principal));
    },
  );

  app.post<{ Body: Static<typeof PasskeyRegistrationBody> }>(
    '/admin/auth/mfa/webauthn',
    {
      schema: {
        summary: 'Register a passkey or security key; the first factor also gets 10 recovery codes',
        tags: [TAG.mfa],
        security: [{ bearerAuth: [] }],
        body: PasskeyRegistrationBody,
        response: { 201: FactorConfirmed, ...bodyErrors({ ...bearerErrors, 400: refused }) },
      },
    },
    async (request, reply) => {
      const principal = await authenticateMfaPrincipal(deps, bearerToken(request.headers.authorization));
      const { credential, name } = request.body;
      const label = name?.trim() ?? '';
      const confirmed = await registerPasskey(deps, principal, credential, label === '' ? 'Passkey' : label, requestContext(request));
      const session = confirmed.session === undefined ? {} : loginBody(confirmed.session);
      return noStore(reply).code(201).send({ factor_id: confirmed.factorId, recovery_codes: confirmed.recoveryCodes, ...session });
    },
  );

  app.post<{ Body: Static<typeof PasskeySignInBody> }>(
    '/admin/auth/mfa/webauthn/options',
    {
      schema: {
        summary: 'Request options for answering a sign-in with a passkey (navigator.credentials.get())',
        tags: [TAG.mfa],
        body: PasskeySignInBody,
        response: {
          200: PasskeyRequestOptions,
          ...bodyErrors({ 401: MfaErrorBodies.invalidFactor, 404: off, 409: MfaErrorBodies.notEnrolled }),
        },
      },
    },
    async (request, reply) => noStore(reply).send(await passkeySignInOptions(deps, request.body.mfa_token)),
  );
}
