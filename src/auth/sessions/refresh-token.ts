import { createDecipheriv, hash } from 'node:crypto';
import { secureRandomBytes } from '../secure-random.js';

const TOKEN_BYTES = 32;

/** 256 bits from the CSPRNG, base64url: 43 characters. */
export function generateRefreshToken(): string {
  return secureRandomBytes(TOKEN_BYTES).toString('base64url');
}

/**
 * The only form in which a refresh token is stored. The token carries 256 bits of entropy, so a
 * fast unsalted hash is enough: nobody can guess a preimage, and look-up stays one index probe.
 */
export function hashRefreshToken(token: string): string {
  // The one-shot hash: a Hash object costs more to set up than hashing 43 characters.
  return hash('sha256', token, 'base64url');
}

/**
 * Encrypts a rotated token's successor under its predecessor, for the reuse grace window: the
 * successor's 32 bytes XOR a pad derived from the predecessor (a 256-bit secret). A pad is used
 * once: a token is consumed, and its successor sealed, at most once (the conditional update in
 * `rotateRefreshToken`). No tag is needed: the row is found by the predecessor's own hash, so only
 * its holder ever opens it, and whoever can rewrite the row can write tokens of their own anyway.
 */
export function sealSuccessor(previousToken: string, successor: string): string {
  const bytes = Buffer.from(successor, 'base64url');
  // The pad covers 32 bytes: anything longer would be stored partly in the clear.
  if (bytes.length !== TOKEN_BYTES) throw new Error('only a refresh token of 32 bytes can be sealed');
  return xorInPlace(bytes, padFor(previousToken)).toString('base64url');
}

/**
 * The successor sealed under `previousToken`; undefined for a value of neither form. Under any
 * other token a pad-sealed value opens to a different, useless value (see `sealSuccessor`).
 */
export function openSuccessor(previousToken: string, sealed: string): string | undefined {
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length === TOKEN_BYTES) return xorInPlace(bytes, padFor(previousToken)).toString('base64url');
  return openWithGcm(previousToken, bytes);
}

/** Bytes only the holder of `token` can compute: the stored hash does not reveal them. */
function padFor(token: string): Buffer {
  return hash('sha256', `school-auth/successor-pad\0${token}`, 'buffer');
}

function xorInPlace(bytes: Buffer, pad: Buffer): Buffer {
  for (let index = 0; index < bytes.length; index++) bytes[index]! ^= pad[index]!;
  return bytes;
}

/**
 * Successors sealed before the pad (AES-256-GCM: IV, tag, ciphertext). They matter only within
 * their grace window (REFRESH_REUSE_GRACE, at most 300 s) after an upgrade; later reuse revokes.
 */
function openWithGcm(previousToken: string, bytes: Buffer): string | undefined {
  if (bytes.length < 29) return undefined;
  try {
    const key = hash('sha256', `school-auth/successor-key\0${previousToken}`, 'buffer');
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
