import type { FastifyReply, FastifyRequest } from 'fastify';
import type { JWTPayload } from 'jose';
import { RevocationsUnavailableError } from './revocation-follower.js';
import { InsufficientAuthenticationError, stepUpChallenge, type AssuranceLevel } from './require-acr.js';

/** The claims of a verified school-auth access token. */
export interface VerifiedAccessToken extends JWTPayload {
  sub: string;
  school_id: string;
  username: string;
  sid: string;
  exp: number;
  /** `aal1` (password only) or `aal2` (with a second factor); absent in tokens of older versions. */
  acr?: AssuranceLevel;
  /** RFC 8176 methods: `pwd`, `otp`, `mfa`. */
  amr?: string[];
}

export type VerifyAccessToken = (token: string) => Promise<VerifiedAccessToken>;

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the school-auth hook once the bearer token is verified. */
    accessToken?: VerifiedAccessToken;
  }
}

/**
 * A Fastify onRequest/preHandler hook: 401 with `WWW-Authenticate: Bearer` unless the request
 * carries a valid school-auth bearer token, whose claims it puts on `request.accessToken`.
 */
export function requireAccessToken(verify: VerifyAccessToken) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '');
    try {
      if (match?.[1] === undefined) throw new Error('no bearer token');
      request.accessToken = await verify(match[1]);
    } catch (error) {
      // The feed is unreadable and the verifier fails closed: not the client's fault, try later.
      if (error instanceof RevocationsUnavailableError) {
        await reply.code(503).header('retry-after', '10').send({ detail: 'Service temporarily unavailable' });
        return;
      }
      // A valid token at too low a level: RFC 9470 tells the client to sign in with a second factor.
      if (error instanceof InsufficientAuthenticationError) {
        await reply.code(401).header('www-authenticate', stepUpChallenge(error.required)).send({ detail: 'This operation needs a session signed in with a second factor' });
        return;
      }
      await reply.code(401).header('www-authenticate', 'Bearer').send({ detail: 'Could not validate credentials' });
    }
  };
}
