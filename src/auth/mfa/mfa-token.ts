import { hash } from 'node:crypto';
import { secureRandomBytes } from '../secure-random.js';

/** Seconds an mfa_token lives: the `expires_in` of the second-factor 403 (docs/second-factor.md). */
export const MFA_TOKEN_LIFETIME = 300;

/** 256 bits from the CSPRNG, base64url (43 characters): never a JWT, so never taken for an access token. */
export function generateMfaToken(): string {
  return secureRandomBytes(32).toString('base64url');
}

/** The only stored form: with 256 bits of entropy a plain SHA-256 is enough. */
export function hashMfaToken(token: string): string {
  return hash('sha256', `school-auth mfa token\0${token}`, 'base64url');
}
