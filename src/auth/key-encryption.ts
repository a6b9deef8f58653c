import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { UsageError } from '../errors.js';
import type { KeyEncryptionKey } from '../key-encryption-key.js';

/** The stored form of an encrypted private key: this prefix, then base64url(iv | tag | ciphertext). */
export const SEALED_PREFIX = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * A private key that cannot be read with the configured key file: the operator must fix the
 * configuration, so the message names KEY_ENCRYPTION_KEY_FILE and the key, never the key material.
 */
export class KeyEncryptionError extends UsageError {
  constructor(message: string) {
    super(message);
    this.name = 'KeyEncryptionError';
  }
}

export function isSealed(stored: string): boolean {
  return stored.startsWith(SEALED_PREFIX);
}

/** The kid is authenticated with the ciphertext, so a sealed key moved to another row never opens. */
function associatedData(kid: string): Buffer {
  return Buffer.from(`school-auth signing key ${kid}`, 'utf8');
}

/** Encrypts a private JWK (AES-256-GCM, a fresh random IV each time); plaintext without a key file. */
export function sealPrivateJwk(privateJwk: string, kid: string, encryption: KeyEncryptionKey | undefined): string {
  if (encryption === undefined) return privateJwk;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', encryption.key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(associatedData(kid));
  const ciphertext = Buffer.concat([cipher.update(privateJwk, 'utf8'), cipher.final()]);
  return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
}

/**
 * The private JWK of a stored row. A plaintext row (stored before encryption was turned on) is
 * returned as it is; a sealed one needs the key file it was sealed with.
 */
export function openPrivateJwk(stored: string, kid: string, encryption: KeyEncryptionKey | undefined): string {
  if (!isSealed(stored)) return stored;
  if (encryption === undefined) {
    throw new KeyEncryptionError(`signing key ${kid} is stored encrypted: set KEY_ENCRYPTION_KEY_FILE to the key file it was encrypted with`);
  }
  const sealed = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64url');
  const refused = new KeyEncryptionError(
    `signing key ${kid} cannot be decrypted with KEY_ENCRYPTION_KEY_FILE ${encryption.file}: ` +
      'it is not the key file the key was encrypted with, or the stored key was altered',
  );
  if (sealed.length <= IV_BYTES + TAG_BYTES) throw refused;
  const decipher = createDecipheriv('aes-256-gcm', encryption.key, sealed.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(associatedData(kid));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    // GCM's tag check failed: wrong key, altered bytes or another row's kid; which one is unknowable.
    throw refused;
  }
}

/**
 * Refuses a key file that does not open every sealed key stored, and a missing key file when any
 * is sealed: the server would not start, and a key command would write a key the server cannot read.
 */
export function checkStoredKeysOpen(rows: readonly { kid: string; private_jwk: string }[], encryption: KeyEncryptionKey | undefined): void {
  for (const row of rows) openPrivateJwk(row.private_jwk, row.kid, encryption);
}
