import type { AssuranceLevel } from './require-acr.js';

export interface VerifierOptions {
  readonly issuer: string;
  readonly audience: string;
  /** e.g. https://auth.example.org/.well-known/jwks.json */
  readonly jwksUrl: string | URL;
  /** Only these algorithms are accepted; school-auth's own choices by default. */
  readonly algorithms?: readonly string[];
  /**
   * Milliseconds between two JWKS fetches caused by an unknown `kid` (default 30 s, as jose's).
   * Keep it below school-auth's KEY_ACTIVATION_DELAY, so a new key is fetched before it signs.
   */
  readonly cooldownDuration?: number;
  /**
   * Milliseconds a fetched JWKS is used at most (default and ceiling: 60 s; larger values are
   * taken as 60 s). The JWKS response's `Cache-Control: max-age` (minus its `Age`) applies when
   * shorter: school-auth sends `max-age=30`, so a key withdrawn with `school-auth keys revoke`
   * stops verifying within 30 s of leaving the JWKS. If the JWKS cannot be fetched once the copy
   * has expired, every token is refused (the copy might hold a withdrawn key).
   */
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
  /**
   * Until the feed has been read once (to its last page), `'refuse'` (default) refuses every token
   * with ERR_REVOCATIONS_UNAVAILABLE: a verifier that cannot know which sessions ended accepts
   * none. A verification then waits for the first read, and starts a new one when the last failed
   * more than a second ago. `'accept'` accepts tokens meanwhile, unchecked (even of sessions ended
   * long ago), for `revocationsMaxStaleness` from the verifier's creation; `whenRevocationsStale`
   * applies after that.
   */
  readonly whenRevocationsNeverRead?: 'refuse' | 'accept';
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
  /**
   * Milliseconds since the epoch; `Date.now` by default. The clock `exp`, the JWKS copy's age and
   * the feed's staleness are checked against: for tests and simulations.
   */
  readonly now?: () => number;
}
