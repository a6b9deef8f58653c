import { createCipheriv, createDecipheriv, hash } from 'node:crypto';
import { secureRandomBytes } from '../secure-random.js';

/** 256 bits from the CSPRNG, base64url: 43 characters. */
export function generateRefreshToken(): string {
  return secureRandomBytes(32).toString('base64url');
}

/**
 * The only form in which a refresh token is stored. The token carries 256 bits of entropy, so a
 * fast unsalted hash is enough: nobody can guess a preimage, and look-up stays one index probe.
 */
export function hashRefreshToken(token: string): string {
  // The one-shot hash: a Hash object costs more to set up than hashing 43 characters.
  return hash('sha256', token, 'base64url');
}

/** A key only the holder of `token` can derive: the stored hash does not reveal it. */
function sealingKey(token: string): Buffer {
  return hash('sha256', `school-auth/successor-key\0${token}`, 'buffer');
}

/** Encrypts a rotated token's successor under its predecessor, for the reuse grace window. */
export function sealSuccessor(previousToken: string, successor: string): string {
  const iv = secureRandomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(previousToken), iv);
  const sealed = Buffer.concat([cipher.update(successor, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
}

/** Returns undefined when the sealed value was not made with this token. */
export function openSuccessor(previousToken: string, sealed: string): string | undefined {
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length < 29) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(previousToken), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
