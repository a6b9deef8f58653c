import { jwtVerify } from 'jose';
import { ACCESS_TOKEN_TYPE } from './access-token-type.js';
import { assertTokenLifetime } from './token-lifetime.js';
import { MAX_JWKS_AGE_MS, createRemoteKeySet } from './remote-key-set.js';
import { RevocationFollower, RevocationsUnavailableError, SessionRevokedError } from './revocation-follower.js';
import { assertAcr } from './require-acr.js';
import type { VerifiedAccessToken, VerifyAccessToken } from './require-access-token.js';
import type { VerifierOptions } from './verifier-options.js';

export { RevocationsUnavailableError, SessionRevokedError } from './revocation-follower.js';
export { InsufficientAuthenticationError, type AssuranceLevel } from './require-acr.js';
export { requireAccessToken, type VerifiedAccessToken, type VerifyAccessToken } from './require-access-token.js';
export type { VerifierOptions } from './verifier-options.js';

/** school-auth's default ACCESS_TOKEN_TTL. */
const DEFAULT_MAX_TOKEN_AGE = 900;

/** How far ahead of the verifier's clock an `iat` may be (see token-lifetime.ts). */
const CLOCK_SKEW_SECONDS = 60;

/** A verifier; `close()` stops following the revocation feed. */
export type AccessTokenVerifier = VerifyAccessToken & { close(): void };

function followerFor(options: VerifierOptions, maxTokenAge: number, now: () => number): RevocationFollower | undefined {
  if (options.revocationsUrl === false) return undefined;
  return new RevocationFollower({
    url: new URL(options.revocationsUrl ?? new URL('/auth/revocations', new URL(options.jwksUrl).origin)),
    interval: options.revocationsInterval ?? 10_000,
    // A sid learned now belongs to a session that ended by now: its tokens expire within this.
    retention: (maxTokenAge + CLOCK_SKEW_SECONDS) * 1000,
    now,
  });
}

/**
 * Refuses a token whose session ended; every token before the feed was first read (unless
 * `whenRevocationsNeverRead: 'accept'`), and while the feed is too stale and the verifier fails closed.
 */
async function assertSessionLive(follower: RevocationFollower | undefined, options: VerifierOptions, sid: string): Promise<void> {
  if (follower === undefined) return;
  await follower.readIfNeverRead();
  if (follower.isEnded(sid)) throw new SessionRevokedError('the session of this token has ended');
  if (!follower.hasRead() && (options.whenRevocationsNeverRead ?? 'refuse') === 'refuse') {
    throw new RevocationsUnavailableError('the revocation feed has not been read yet');
  }
  const tooStale = follower.staleness() > (options.revocationsMaxStaleness ?? 60_000);
  if (tooStale && (options.whenRevocationsStale ?? 'refuse') === 'refuse') {
    throw new RevocationsUnavailableError('the revocation feed has not been read recently enough');
  }
}

/**
 * For the platform's other services: verifies school-auth access tokens locally against the
 * published JWKS (kept as long as its `Cache-Control: max-age` says, at most 60 s, and refetched
 * when an unknown `kid` appears, so key rotation needs no restart). Throws jose's typed errors
 * (e.g. ERR_JWT_EXPIRED) for any token it refuses, also ERR_JWT_CLAIM_VALIDATION_FAILED for one
 * whose lifetime (`exp - iat`) exceeds `maxTokenAge`. It follows school-auth's revocation feed
 * (every 10 s by default) and refuses the token of an ended session with ERR_SESSION_REVOKED;
 * until the feed has been read once it refuses every token with ERR_REVOCATIONS_UNAVAILABLE (see
 * `whenRevocationsNeverRead`, and `whenRevocationsStale` for when the feed becomes unreachable).
 */
export function createAccessTokenVerifier(options: VerifierOptions): AccessTokenVerifier {
  const now = options.now ?? (() => Date.now());
  const keys = createRemoteKeySet({
    url: new URL(options.jwksUrl),
    maxAge: Math.min(options.cacheMaxAge ?? MAX_JWKS_AGE_MS, MAX_JWKS_AGE_MS),
    cooldown: options.cooldownDuration ?? 30_000,
    now,
  });
  const algorithms = [...(options.algorithms ?? ['ES256', 'EdDSA', 'RS256'])];
  const maxTokenAge = options.maxTokenAge ?? DEFAULT_MAX_TOKEN_AGE;
  const follower = followerFor(options, maxTokenAge, now);
  const verify: VerifyAccessToken = async (token) => {
    const { payload } = await jwtVerify(token, keys, {
      issuer: options.issuer,
      audience: options.audience,
      typ: ACCESS_TOKEN_TYPE,
      algorithms,
      requiredClaims: ['sub', 'sid', 'exp', 'iat'],
      currentDate: new Date(now()),
    });
    if (typeof payload.school_id !== 'string' || typeof payload.username !== 'string' || typeof payload.sid !== 'string') {
      throw new TypeError('access token lacks school_id, username or sid');
    }
    assertTokenLifetime(payload, maxTokenAge, Math.floor(now() / 1000));
    await assertSessionLive(follower, options, payload.sid);
    assertAcr(payload, options.requireAcr);
    return payload as VerifiedAccessToken;
  };
  return Object.assign(verify, { close: () => follower?.stop() });
}
