import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { SecondFactorProof } from '../../../auth/mfa/factor-check.js';
import { relyingParty } from '../../../auth/mfa/passkey-party.js';
import { verifySecondFactor } from '../../../auth/mfa/verify.js';
import type { AppContext } from '../../../auth/context.js';
import { redact } from '../../body/fastapi-validation.js';
import { ValidationFailure } from '../../body/validation-failure.js';
import { MfaErrorBodies, MfaVerifyBody } from './schemas.js';
import { TAG } from '../../plugins/docs-tags.js';
import { requestContext } from '../../request-context.js';
import { LoginResponse, bodyErrors } from '../schemas.js';
import { sendLoginAnswer } from '../login-answer.js';

type Body = Static<typeof MfaVerifyBody>;

const METHODS = ['totp', 'webauthn', 'recovery_code'] as const;
const EXPECTED = "'totp', 'webauthn' or 'recovery_code'";

/**
 * The proof the body carries for its method, as a Pydantic model with a `Literal` method and a
 * validator requiring `code` or `credential` would answer: a literal_error for an unknown
 * method, a `missing` item for the field the method needs.
 */
function proofOf(body: Body): SecondFactorProof {
  const method = METHODS.find((candidate) => candidate === body.method);
  if (method === undefined) {
    throw new ValidationFailure([
      { type: 'literal_error', loc: ['body', 'method'], msg: `Input should be ${EXPECTED}`, input: body.method, ctx: { expected: EXPECTED } },
    ]);
  }
  const needed = method === 'webauthn' ? 'credential' : 'code';
  if (body[needed] === undefined || body[needed] === null) {
    throw new ValidationFailure([{ type: 'missing', loc: ['body', needed], msg: 'Field required', input: redact(body) }]);
  }
  return method === 'webauthn' ? { method, credential: body.credential } : { method, code: body.code ?? '' };
}

export function registerMfaVerifyRoute(app: FastifyInstance, deps: AppContext): void {
  app.post<{ Body: Body }>(
    '/admin/auth/mfa/verify',
    {
      config: { attemptCounter: 'mfaVerifications' },
      schema: {
        summary: 'Complete a sign-in with a second factor (answers exactly as a login does)',
        tags: [TAG.mfa],
        body: MfaVerifyBody,
        response: {
          200: LoginResponse,
          ...bodyErrors({
            401: MfaErrorBodies.invalidFactor,
            403: MfaErrorBodies.locked,
            429: MfaErrorBodies.throttled,
          }),
        },
      },
    },
    async (request, reply) => {
      const proof = proofOf(request.body);
      // A server without passkeys says so rather than counting the attempt as a wrong factor.
      if (proof.method === 'webauthn') relyingParty(deps.config);
      const result = await verifySecondFactor(deps, { mfaToken: request.body.mfa_token, ...proof }, requestContext(request));
      return sendLoginAnswer(reply, result);
    },
  );
}
