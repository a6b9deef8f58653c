import type { FastifyReply } from 'fastify';
import type { LoginResult } from '../../auth/sign-in/login.js';
import type { SecondFactorChallenge } from '../../auth/mfa/challenge.js';
import { noStore } from '../request-context.js';

/** The login 200 body: the same for a password-only login and for a completed second factor. */
export function loginBody(result: LoginResult) {
  return {
    access_token: result.accessToken,
    expires_in: result.expiresIn,
    school_id: result.schoolId,
    username: result.username,
    token_type: 'bearer' as const,
    refresh_token: result.refreshToken,
    refresh_expires_in: result.refreshExpiresIn,
  };
}

function isChallenge(result: LoginResult | SecondFactorChallenge): result is SecondFactorChallenge {
  return 'mfaToken' in result;
}

/** Sends the answer of a login: 200 with a session, or the 403 that asks for the second factor. */
export function sendLoginAnswer(reply: FastifyReply, result: LoginResult | SecondFactorChallenge): FastifyReply {
  if (!isChallenge(result)) return noStore(reply).send(loginBody(result));
  // The mfa_token is a credential for 300 s: never cached either.
  return noStore(reply)
    .code(403)
    .send({
      detail: result.enrollment ? 'Second factor enrollment required' : 'Second factor required',
      mfa_token: result.mfaToken,
      mfa_methods: result.methods,
      expires_in: result.expiresIn,
    });
}
