import { errors, type JWTPayload } from 'jose';

/** How far ahead of the verifier's clock an `iat` may be: instances' clocks differ a little. */
const CLOCK_SKEW_SECONDS = 60;

/**
 * Refuses a token that claims a longer life than school-auth ever gives: `exp - iat` above
 * `maxTokenAge`, or an `iat` in the future (which would stretch `exp` just as far). Such a token
 * can only have been signed with a leaked key, and this makes it useless even before the key is
 * revoked: no accepted token outlives `now + maxTokenAge + skew`. Checked after the signature.
 * Throws jose's typed ERR_JWT_CLAIM_VALIDATION_FAILED, like the other claim checks.
 */
export function assertTokenLifetime(payload: JWTPayload, maxTokenAge: number, nowSeconds: number): void {
  const { iat, exp } = payload;
  if (typeof iat !== 'number' || typeof exp !== 'number') {
    throw new errors.JWTClaimValidationFailed('"iat" and "exp" claims are required', payload, 'iat', 'missing');
  }
  if (exp - iat > maxTokenAge) {
    throw new errors.JWTClaimValidationFailed(`token lifetime exceeds ${maxTokenAge} s`, payload, 'exp', 'check_failed');
  }
  if (iat > nowSeconds + CLOCK_SKEW_SECONDS) {
    throw new errors.JWTClaimValidationFailed('"iat" claim is in the future', payload, 'iat', 'check_failed');
  }
}
