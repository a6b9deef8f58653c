import { hash } from 'node:crypto';
import { secureRandomBytes } from '../secure-random.js';

const RECOVERY_CODE_COUNT = 10;

/** Crockford-style base32 without look-alikes (no I, L, O, U): easy to read off paper. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * One recovery code: 20 characters of 5 bits each, 100 bits from the CSPRNG, shown in groups of
 * five (`xxxxx-xxxxx-xxxxx-xxxxx`).
 */
function generateRecoveryCode(): string {
  const bytes = secureRandomBytes(20);
  const chars = [...bytes].map((byte) => ALPHABET[byte & 31]);
  return [0, 5, 10, 15].map((start) => chars.slice(start, start + 5).join('')).join('-');
}

export function generateRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, generateRecoveryCode);
}

/** What the admin may type: any case, with or without dashes and spaces. */
function normalizeRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '');
}

/**
 * The only stored form. With 100 bits of entropy per code a fast unsalted SHA-256 is enough:
 * nobody can search that space offline, unlike a password's, so a slow salted hash would add
 * cost at every use without adding safety.
 */
export function hashRecoveryCode(code: string): string {
  return hash('sha256', `school-auth recovery code\0${normalizeRecoveryCode(code)}`, 'base64url');
}
