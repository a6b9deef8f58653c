import type { KeyEncryptionKey } from '../../key-encryption-key.js';
import { isSealed, openSealedText, sealText } from '../sealed-text.js';

/** The factor id is authenticated with the ciphertext: a sealed secret copied to another row never opens. */
function labelOf(factorId: string): string {
  return `school-auth mfa factor ${factorId}`;
}

/**
 * Seals a factor's secret with AES-256-GCM under KEY_ENCRYPTION_KEY_FILE when one is configured,
 * as the signing keys are; without one it is stored as it is, protected only by the database
 * file's permissions (README, Key custody).
 */
export function sealFactorSecret(secret: string, factorId: string, encryption: KeyEncryptionKey | undefined): string {
  if (encryption === undefined) return secret;
  return sealText(secret, labelOf(factorId), encryption.key);
}

/**
 * The secret of a stored factor. A sealed one needs the key file it was sealed with: without it
 * (or with another) this throws, and the request is a 500 whose cause is logged, never a
 * silent acceptance.
 */
export function openFactorSecret(stored: string, factorId: string, encryption: KeyEncryptionKey | undefined): string {
  if (!isSealed(stored)) return stored;
  if (encryption === undefined) throw new Error(`mfa factor ${factorId} is sealed and KEY_ENCRYPTION_KEY_FILE is not set`);
  const opened = openSealedText(stored, labelOf(factorId), encryption.key);
  if (opened === undefined) throw new Error(`mfa factor ${factorId} does not open with KEY_ENCRYPTION_KEY_FILE ${encryption.file}`);
  return opened;
}
