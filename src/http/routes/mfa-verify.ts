import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { MfaMethod } from '../../auth/mfa/challenge.js';
import { verifySecondFactor } from '../../auth/mfa/verify.js';
import type { AppContext } from '../../context.js';
import { ValidationFailure } from '../body/validation-failure.js';
import { MfaErrorBodies, MfaVerifyBody } from '../mfa-schemas.js';
import { TAG } from '../plugins/docs-tags.js';
import { requestContext } from '../request-context.js';
import { LoginResponse, bodyErrors } from '../schemas.js';
import { sendLoginAnswer } from './login-answer.js';

const METHODS: readonly MfaMethod[] = ['totp', 'recovery_code'];

/** Pydantic's answer for a `Literal['totp', 'recovery_code']` field given anything else. */
function checkMethod(method: string): MfaMethod {
  const known = METHODS.find((candidate) => candidate === method);
  if (known !== undefined) return known;
  const expected = "'totp' or 'recovery_code'";
  throw new ValidationFailure([
    { type: 'literal_error', loc: ['body', 'method'], msg: `Input should be ${expected}`, input: method, ctx: { expected } },
  ]);
}

export function registerMfaVerifyRoute(app: FastifyInstance, deps: AppContext): void {
  app.post<{ Body: Static<typeof MfaVerifyBody> }>(
    '/admin/auth/mfa/verify',
    {
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
      const { mfa_token, code } = request.body;
      const method = checkMethod(request.body.method);
      const result = await verifySecondFactor(deps, { mfaToken: mfa_token, method, code }, requestContext(request));
      return sendLoginAnswer(reply, result);
    },
  );
}
