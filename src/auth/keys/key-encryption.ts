import { UsageError } from '../../errors.js';
import type { KeyEncryptionKey } from '../../config/key-encryption-key.js';
import { isSealed, openSealedText, sealText } from './sealed-text.js';

export { SEALED_PREFIX, isSealed } from './sealed-text.js';

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

/** The kid is authenticated with the ciphertext, so a sealed key moved to another row never opens. */
function labelOf(kid: string): string {
  return `school-auth signing key ${kid}`;
}

/** Encrypts a private JWK (AES-256-GCM, a fresh random IV each time); plaintext without a key file. */
export function sealPrivateJwk(privateJwk: string, kid: string, encryption: KeyEncryptionKey | undefined): string {
  if (encryption === undefined) return privateJwk;
  return sealText(privateJwk, labelOf(kid), encryption.key);
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
  const opened = openSealedText(stored, labelOf(kid), encryption.key);
  if (opened !== undefined) return opened;
  throw new KeyEncryptionError(
    `signing key ${kid} cannot be decrypted with KEY_ENCRYPTION_KEY_FILE ${encryption.file}: ` +
      'it is not the key file the key was encrypted with, or the stored key was altered',
  );
}

/**
 * Refuses a key file that does not open every sealed key stored, and a missing key file when any
 * is sealed: the server would not start, and a key command would write a key the server cannot read.
 */
export function checkStoredKeysOpen(rows: readonly { kid: string; private_jwk: string }[], encryption: KeyEncryptionKey | undefined): void {
  for (const row of rows) openPrivateJwk(row.private_jwk, row.kid, encryption);
}
