import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { NewPasswordRejected, changeOwnPassword } from '../../../auth/accounts/password-change.js';
import type { AppContext } from '../../../auth/context.js';
import { ValidationFailure } from '../../body/validation-failure.js';
import { claimsOf, requireBearer } from '../../bearer-auth.js';
import { TAG } from '../../plugins/docs-tags.js';
import { requestContext } from '../../request-context.js';
import { ErrorBodies, bodyErrors } from '../schemas.js';
import { PasswordChangeBody, SessionErrorBodies } from './schemas.js';

/** A password the rules refuse, as FastAPI reports a model validator's ValueError; never echoed. */
export function rejectedNewPassword(problem: string): ValidationFailure {
  return new ValidationFailure([
    { type: 'value_error', loc: ['body', 'new_password'], msg: `Value error, ${problem}`, input: '[redacted]', ctx: { error: {} } },
  ]);
}

/** Self-service password change: the admin's own, with their access token. */
export function registerPasswordRoute(app: FastifyInstance, deps: AppContext): void {
  app.post<{ Body: Static<typeof PasswordChangeBody> }>(
    '/admin/auth/password',
    {
      preValidation: requireBearer(deps),
      schema: {
        summary: 'Change your own password; ends every other session of yours',
        description: 'A wrong current password counts as a failed login for throttling (429 with Retry-After when blocked).',
        tags: [TAG.sessions],
        security: [{ bearerAuth: [] }],
        body: PasswordChangeBody,
        response: {
          204: { type: 'null', description: 'Changed; every other session has ended' },
          ...bodyErrors({ 401: SessionErrorBodies.incorrectPassword, 429: ErrorBodies.throttled }),
        },
      },
    },
    async (request, reply) => {
      const { current_password, new_password } = request.body;
      try {
        await changeOwnPassword(deps, claimsOf(request), { current: current_password, next: new_password }, requestContext(request));
      } catch (error) {
        if (error instanceof NewPasswordRejected) throw rejectedNewPassword(error.problem);
        throw error;
      }
      return reply.code(204).send();
    },
  );
}
