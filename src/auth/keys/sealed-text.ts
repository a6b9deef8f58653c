import { createCipheriv, createDecipheriv, type KeyObject } from 'node:crypto';
import { secureRandomBytes } from '../secure-random.js';

/** The stored form of sealed text: this prefix, then base64url(iv | tag | ciphertext). */
export const SEALED_PREFIX = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function isSealed(stored: string): boolean {
  return stored.startsWith(SEALED_PREFIX);
}

/**
 * Encrypts `text` with AES-256-GCM under `key`, a fresh random IV each time. `label` names the row
 * it belongs to and is authenticated with the ciphertext, so sealed text moved to another row
 * never opens.
 */
export function sealText(text: string, label: string, key: KeyObject): string {
  const iv = secureRandomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(label, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
}

/**
 * The text sealed by {@link sealText} with the same key and label; undefined when it does not open:
 * another key, another row's label or altered bytes (GCM cannot tell which).
 */
export function openSealedText(stored: string, label: string, key: KeyObject): string | undefined {
  const sealed = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64url');
  if (sealed.length <= IV_BYTES + TAG_BYTES) return undefined;
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(label, 'utf8'));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
