import type { Db } from '../../db/database.js';
import { listTotpSecrets } from '../../db/queries/mfa-secrets.js';
import type { KeyEncryptionKey } from '../../config/key-encryption-key.js';
import { KeyEncryptionError } from '../keys/key-encryption.js';
import { isSealed, openSealedText, sealText } from '../keys/sealed-text.js';

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
 * (or with another) this throws, naming the factor and the file, never the secret. In a request
 * that is a 503 and the instance is no longer ready (SealedSecretWatch), never a silent
 * acceptance; in `keys encrypt`, a refusal.
 */
export function openFactorSecret(stored: string, factorId: string, encryption: KeyEncryptionKey | undefined): string {
  if (!isSealed(stored)) return stored;
  if (encryption === undefined) {
    throw new KeyEncryptionError(`the TOTP secret of mfa factor ${factorId} is stored encrypted: set KEY_ENCRYPTION_KEY_FILE to the key file it was encrypted with`);
  }
  const opened = openSealedText(stored, labelOf(factorId), encryption.key);
  if (opened !== undefined) return opened;
  throw new KeyEncryptionError(
    `the TOTP secret of mfa factor ${factorId} cannot be decrypted with KEY_ENCRYPTION_KEY_FILE ${encryption.file}: ` +
      'it is not the key file the secret was encrypted with, or the stored secret was altered',
  );
}

/**
 * Every stored TOTP secret, each checked to open with `encryption`: the server refuses to start,
 * and `keys encrypt` to change anything, when one does not, as with the signing keys. Otherwise
 * the admin it belongs to would meet a 500 at the second factor, long after the mistake.
 */
export async function listTotpSecretsThatOpen(db: Db, encryption: KeyEncryptionKey | undefined) {
  const secrets = await listTotpSecrets(db);
  for (const row of secrets) openFactorSecret(row.secret, row.id, encryption);
  return secrets;
}
