import type { FastifyReply, FastifyRequest } from 'fastify';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { ACCESS_TOKEN_TYPE } from './access-token-type.js';
import { assertTokenLifetime } from './token-lifetime.js';
import { RevocationFollower, RevocationsUnavailableError, SessionRevokedError } from './revocation-follower.js';
import { InsufficientAuthenticationError, assertAcr, stepUpChallenge, type AssuranceLevel } from './require-acr.js';

export { RevocationsUnavailableError, SessionRevokedError } from './revocation-follower.js';
export { InsufficientAuthenticationError, type AssuranceLevel } from './require-acr.js';

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
  /**
   * The revocation feed to follow; by default the JWKS URL's origin + `/auth/revocations`. `false`
   * follows none: a token of an ended session then stays valid until its `exp`.
   */
  readonly revocationsUrl?: string | URL | false;
  /** Milliseconds between two polls of the feed (default 10 s). */
  readonly revocationsInterval?: number;
  /** Milliseconds without a successful poll after which `whenRevocationsStale` applies (default 60 s). */
  readonly revocationsMaxStaleness?: number;
  /**
   * What to do once the feed has not been read for `revocationsMaxStaleness`: `'refuse'` (default)
   * refuses every token with ERR_REVOCATIONS_UNAVAILABLE until a poll succeeds again; `'accept'`
   * keeps checking against the last known list, so a session ended meanwhile works until `exp`.
   */
  readonly whenRevocationsStale?: 'refuse' | 'accept';
  /** `'aal2'` refuses tokens of sessions signed in without a second factor (InsufficientAuthenticationError). */
  readonly requireAcr?: AssuranceLevel;
}

/** school-auth's default ACCESS_TOKEN_TTL. */
const DEFAULT_MAX_TOKEN_AGE = 900;

/** How far ahead of the verifier's clock an `iat` may be (see token-lifetime.ts). */
const CLOCK_SKEW_SECONDS = 60;

export type VerifyAccessToken = (token: string) => Promise<VerifiedAccessToken>;

/** A verifier; `close()` stops following the revocation feed. */
export type AccessTokenVerifier = VerifyAccessToken & { close(): void };

function followerFor(options: VerifierOptions, maxTokenAge: number): RevocationFollower | undefined {
  if (options.revocationsUrl === false) return undefined;
  return new RevocationFollower({
    url: new URL(options.revocationsUrl ?? new URL('/auth/revocations', new URL(options.jwksUrl).origin)),
    interval: options.revocationsInterval ?? 10_000,
    // A sid learned now belongs to a session that ended by now: its tokens expire within this.
    retention: (maxTokenAge + CLOCK_SKEW_SECONDS) * 1000,
    now: () => Date.now(),
  });
}

/** Refuses a token whose session ended, or every token while the feed is too stale and the verifier fails closed. */
async function assertSessionLive(follower: RevocationFollower | undefined, options: VerifierOptions, sid: string): Promise<void> {
  if (follower === undefined) return;
  await follower.firstPoll;
  if (follower.isEnded(sid)) throw new SessionRevokedError('the session of this token has ended');
  const tooStale = follower.staleness() > (options.revocationsMaxStaleness ?? 60_000);
  if (tooStale && (options.whenRevocationsStale ?? 'refuse') === 'refuse') {
    throw new RevocationsUnavailableError('the revocation feed has not been read recently enough');
  }
}

/**
 * For the platform's other services: verifies school-auth access tokens locally against the
 * published JWKS (cached, and refetched when an unknown `kid` appears, so key rotation needs no
 * restart). Throws jose's typed errors (e.g. ERR_JWT_EXPIRED) for any token it refuses, also
 * ERR_JWT_CLAIM_VALIDATION_FAILED for one whose lifetime (`exp - iat`) exceeds `maxTokenAge`.
 * It follows school-auth's revocation feed (every 10 s by default) and refuses the token of an
 * ended session with ERR_SESSION_REVOKED; see `whenRevocationsStale` for when the feed is unreachable.
 */
export function createAccessTokenVerifier(options: VerifierOptions): AccessTokenVerifier {
  const jwks = createRemoteJWKSet(new URL(options.jwksUrl), {
    ...(options.cooldownDuration === undefined ? {} : { cooldownDuration: options.cooldownDuration }),
    ...(options.cacheMaxAge === undefined ? {} : { cacheMaxAge: options.cacheMaxAge }),
  });
  const algorithms = [...(options.algorithms ?? ['ES256', 'EdDSA', 'RS256'])];
  const maxTokenAge = options.maxTokenAge ?? DEFAULT_MAX_TOKEN_AGE;
  const follower = followerFor(options, maxTokenAge);
  const verify: VerifyAccessToken = async (token) => {
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
    await assertSessionLive(follower, options, payload.sid);
    assertAcr(payload, options.requireAcr);
    return payload as VerifiedAccessToken;
  };
  return Object.assign(verify, { close: () => follower?.stop() });
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
