import type { JWTPayload } from 'jose';

/** NIST SP 800-63B assurance levels, as school-auth writes them in `acr`. */
export type AssuranceLevel = 'aal1' | 'aal2';

const RANK: Record<AssuranceLevel, number> = { aal1: 1, aal2: 2 };

/**
 * A valid token whose session was signed in at too low a level: the client must sign in again
 * with a second factor (RFC 9470 step-up), not merely refresh, since a refresh keeps the level.
 */
export class InsufficientAuthenticationError extends Error {
  readonly code = 'ERR_INSUFFICIENT_USER_AUTHENTICATION';

  constructor(readonly required: AssuranceLevel) {
    super(`the token's session was not signed in at ${required}`);
    this.name = 'InsufficientAuthenticationError';
  }
}

/** Refuses a token below `required`; a token without `acr` (issued before there were levels) is aal1. */
export function assertAcr(payload: JWTPayload, required: AssuranceLevel | undefined): void {
  if (required === undefined) return;
  const level = payload.acr === 'aal2' ? RANK.aal2 : RANK.aal1;
  if (level < RANK[required]) throw new InsufficientAuthenticationError(required);
}

/** The RFC 9470 `WWW-Authenticate` challenge that asks for a sign-in at `required`. */
export function stepUpChallenge(required: AssuranceLevel): string {
  return `Bearer error="insufficient_user_authentication", error_description="A second factor is required", acr_values="${required}"`;
}
