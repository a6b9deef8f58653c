import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { KeyEncryptionKey } from '../../key-encryption-key.js';

const SEALED_PREFIX = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The factor id is authenticated with the ciphertext: a sealed secret copied to another row never opens. */
function associatedData(factorId: string): Buffer {
  return Buffer.from(`school-auth mfa factor ${factorId}`, 'utf8');
}

/**
 * Seals a factor's secret with AES-256-GCM under KEY_ENCRYPTION_KEY_FILE when one is configured,
 * as the signing keys are; without one it is stored as it is, protected only by the database
 * file's permissions (README, Key custody).
 */
export function sealFactorSecret(secret: string, factorId: string, encryption: KeyEncryptionKey | undefined): string {
  if (encryption === undefined) return secret;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', encryption.key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(associatedData(factorId));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
}

/**
 * The secret of a stored factor. A sealed one needs the key file it was sealed with: without it
 * (or with another) this throws, and the request is a 500 whose cause is logged, never a
 * silent acceptance.
 */
export function openFactorSecret(stored: string, factorId: string, encryption: KeyEncryptionKey | undefined): string {
  if (!stored.startsWith(SEALED_PREFIX)) return stored;
  if (encryption === undefined) throw new Error(`mfa factor ${factorId} is sealed and KEY_ENCRYPTION_KEY_FILE is not set`);
  const sealed = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', encryption.key, sealed.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(associatedData(factorId));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}
