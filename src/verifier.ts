import type { FastifyReply, FastifyRequest } from 'fastify';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { ACCESS_TOKEN_TYPE } from './auth/access-token-type.js';
import { assertTokenLifetime } from './auth/token-lifetime.js';

/** The claims of a verified school-auth access token. */
export interface VerifiedAccessToken extends JWTPayload {
  sub: string;
  school_id: string;
  username: string;
  sid: string;
  exp: number;
}

export interface VerifierOptions {
  readonly issuer: string;
  readonly audience: string;
  /** e.g. https://auth.example.org/.well-known/jwks.json */
  readonly jwksUrl: string | URL;
  /** Only these algorithms are accepted; school-auth's own choices by default. */
  readonly algorithms?: readonly string[];
  /**
   * Milliseconds between two JWKS fetches caused by an unknown `kid` (jose's default: 30 s). Keep
   * it below school-auth's KEY_ACTIVATION_DELAY, so a new key is fetched before it signs.
   */
  readonly cooldownDuration?: number;
  /** Milliseconds a fetched JWKS is used before it is fetched again (jose's default: 10 min). */
  readonly cacheMaxAge?: number;
  /**
   * Seconds: tokens whose `exp - iat` exceeds this are refused, so a token forged with a leaked
   * key for years is useless. Set it to school-auth's ACCESS_TOKEN_TTL (default 900, as here).
   */
  readonly maxTokenAge?: number;
}

/** school-auth's default ACCESS_TOKEN_TTL. */
const DEFAULT_MAX_TOKEN_AGE = 900;

export type AccessTokenVerifier = (token: string) => Promise<VerifiedAccessToken>;

/**
 * For the platform's other services: verifies school-auth access tokens locally against the
 * published JWKS (cached, and refetched when an unknown `kid` appears, so key rotation needs no
 * restart). Throws jose's typed errors (e.g. ERR_JWT_EXPIRED) for any token it refuses, also
 * ERR_JWT_CLAIM_VALIDATION_FAILED for one whose lifetime (`exp - iat`) exceeds `maxTokenAge`.
 */
export function createAccessTokenVerifier(options: VerifierOptions): AccessTokenVerifier {
  const jwks = createRemoteJWKSet(new URL(options.jwksUrl), {
    ...(options.cooldownDuration === undefined ? {} : { cooldownDuration: options.cooldownDuration }),
    ...(options.cacheMaxAge === undefined ? {} : { cacheMaxAge: options.cacheMaxAge }),
  });
  const algorithms = [...(options.algorithms ?? ['ES256', 'EdDSA', 'RS256'])];
  const maxTokenAge = options.maxTokenAge ?? DEFAULT_MAX_TOKEN_AGE;
  return async (token) => {
    const { payload } = await jwtVerify(token, jwks, {
      issuer: options.issuer,
      audience: options.audience,
      typ: ACCESS_TOKEN_TYPE,
      algorithms,
      requiredClaims: ['sub', 'sid', 'exp', 'iat'],
    });
    if (typeof payload.school_id !== 'string' || typeof payload.username !== 'string' || typeof payload.sid !== 'string') {
      throw new TypeError('access token lacks school_id, username or sid');
    }
    assertTokenLifetime(payload, maxTokenAge, Math.floor(Date.now() / 1000));
    return payload as VerifiedAccessToken;
  };
}

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
export function requireAccessToken(verify: AccessTokenVerifier) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '');
    try {
      if (match?.[1] === undefined) throw new Error('no bearer token');
      request.accessToken = await verify(match[1]);
    } catch {
      await reply.code(401).header('www-authenticate', 'Bearer').send({ detail: 'Could not validate credentials' });
    }
  };
}
