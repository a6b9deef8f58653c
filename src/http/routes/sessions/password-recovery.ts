import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { NewPasswordRejected } from '../../../auth/accounts/password-change.js';
import { requestPasswordRecovery } from '../../../auth/accounts/recovery-request.js';
import { resetForgottenPassword } from '../../../auth/accounts/recovery-reset.js';
import type { AppContext } from '../../../auth/context.js';
import { BackgroundWork } from '../../../runtime/background-work.js';
import { TAG } from '../../plugins/docs-tags.js';
import { requestContext } from '../../request-context.js';
import { LoginBody, bodyErrors, errorBody } from '../schemas.js';
import { rejectedNewPassword } from './password.js';
import { PasswordChangeBody } from './schemas.js';

const who = { school_id: LoginBody.properties.school_id, username: LoginBody.properties.username };
const ForgotBody = Type.Object(who);
const ResetBody = Type.Object({
  ...who,
  code: Type.String({ maxLength: 256, description: 'The recovery code of the e-mail (or of the link, after #code=)', format: 'password' }),
  new_password: PasswordChangeBody.properties.new_password,
});

/** The one answer to every request for a code, whoever it names. */
export const FORGOT_ANSWER = { detail: 'If the account can recover its password, a recovery code has been e-mailed to its addresses' };

/** Requests for codes waiting or running at once; beyond, one is dropped (the admin asks again). */
const BACKGROUND_LIMIT = 64;

/** Password recovery by e-mail: ask for a code (always 202), then set a new password with it. */
export function registerPasswordRecoveryRoutes(app: FastifyInstance, deps: AppContext): BackgroundWork {
  const background = new BackgroundWork(BACKGROUND_LIMIT, deps.logger);
  app.post<{ Body: Static<typeof ForgotBody> }>(
    '/admin/auth/password/forgot',
    {
      schema: {
        summary: 'Ask for a password-recovery code by e-mail',
        description: 'Always the same 202, at once, whether or not the account exists or can recover: what happens next is never observable.',
        tags: [TAG.sessions],
        body: ForgotBody,
        response: { 202: Type.Object({ detail: Type.String() }, { description: 'Accepted' }), ...bodyErrors({}) },
      },
    },
    async (request, reply) => {
      const context = requestContext(request);
      const { school_id, username } = request.body;
      background.run('password recovery request', () => requestPasswordRecovery(deps, { schoolId: school_id, username }, context));
      return reply.code(202).send(FORGOT_ANSWER);
    },
  );
  app.post<{ Body: Static<typeof ResetBody> }>(
    '/admin/auth/password/reset',
    {
      schema: {
        summary: 'Set a forgotten password with the mailed recovery code; ends every session of the admin',
        description: 'A second factor is untouched: the next sign-in still asks for it. Guesses are limited per address (429 with Retry-After).',
        tags: [TAG.sessions],
        body: ResetBody,
        response: {
          204: { type: 'null', description: 'The password is set; every session of the admin has ended' },
          ...bodyErrors({
            401: errorBody('Unknown account, or a wrong, spent or expired code', 'Invalid or expired recovery code'),
            429: errorBody('Too many guesses at recovery codes from this client address; header Retry-After (seconds)', 'Too many attempts. Try again later.'),
          }),
        },
      },
    },
    async (request, reply) => {
      const { school_id, username, code, new_password } = request.body;
      try {
        await resetForgottenPassword(deps, { schoolId: school_id, username, code, newPassword: new_password }, requestContext(request));
      } catch (error) {
        if (error instanceof NewPasswordRejected) {
          throw rejectedNewPassword(error.problem);
        }
        throw error;
      }
      return reply.code(204).send();
    },
  );
  return background;
}
