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

/**
 * A stored secret: `label` is authenticated with its ciphertext (sealed text moved to another row
 * never opens); `name` says which one in messages, never what it holds.
 */
export interface SealedSecretOwner {
  readonly label: string;
  readonly name: string;
}

/** Encrypts `text` (AES-256-GCM, a fresh random IV each time); stored as it is without a key file. */
export function sealSecret(text: string, owner: SealedSecretOwner, encryption: KeyEncryptionKey | undefined): string {
  if (encryption === undefined) return text;
  return sealText(text, owner.label, encryption.key);
}

/**
 * A stored secret in clear. A plaintext one (stored before encryption was turned on) is returned
 * as it is; a sealed one needs the key file it was sealed with, or this throws, naming the secret
 * and KEY_ENCRYPTION_KEY_FILE.
 */
export function openSecret(stored: string, owner: SealedSecretOwner, encryption: KeyEncryptionKey | undefined): string {
  if (!isSealed(stored)) return stored;
  if (encryption === undefined) {
    throw new KeyEncryptionError(`${owner.name} is stored encrypted: set KEY_ENCRYPTION_KEY_FILE to the key file it was encrypted with`);
  }
  const opened = openSealedText(stored, owner.label, encryption.key);
  if (opened !== undefined) return opened;
  throw new KeyEncryptionError(
    `${owner.name} cannot be decrypted with KEY_ENCRYPTION_KEY_FILE ${encryption.file}: ` +
      'it is not the key file it was encrypted with, or what is stored was altered',
  );
}

function signingKey(kid: string): SealedSecretOwner {
  return { label: `school-auth signing key ${kid}`, name: `signing key ${kid}` };
}

/** Encrypts a private JWK under KEY_ENCRYPTION_KEY_FILE; plaintext without a key file. */
export function sealPrivateJwk(privateJwk: string, kid: string, encryption: KeyEncryptionKey | undefined): string {
  return sealSecret(privateJwk, signingKey(kid), encryption);
}

/** The private JWK of a stored row (see openSecret). */
export function openPrivateJwk(stored: string, kid: string, encryption: KeyEncryptionKey | undefined): string {
  return openSecret(stored, signingKey(kid), encryption);
}

/**
 * Refuses a key file that does not open every sealed key stored, and a missing key file when any
 * is sealed: the server would not start, and a key command would write a key the server cannot read.
 */
export function checkStoredKeysOpen(rows: readonly { kid: string; private_jwk: string }[], encryption: KeyEncryptionKey | undefined): void {
  for (const row of rows) openPrivateJwk(row.private_jwk, row.kid, encryption);
}
