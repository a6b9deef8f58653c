import type { Db } from '../../db/database.js';
import { listTotpSecrets } from '../../db/queries/mfa-secrets.js';
import type { KeyEncryptionKey } from '../../config/key-encryption-key.js';
import { openSecret, sealSecret, type SealedSecretOwner } from '../keys/key-encryption.js';

function factor(factorId: string): SealedSecretOwner {
  return { label: `school-auth mfa factor ${factorId}`, name: `the TOTP secret of mfa factor ${factorId}` };
}

/**
 * Seals a factor's secret under KEY_ENCRYPTION_KEY_FILE when one is configured, as the signing
 * keys are; without one it is stored as it is, protected only by the database file's permissions.
 */
export function sealFactorSecret(secret: string, factorId: string, encryption: KeyEncryptionKey | undefined): string {
  return sealSecret(secret, factor(factorId), encryption);
}

/**
 * The secret of a stored factor (see openSecret). In a request a secret that does not open is a
 * 503 and the instance is no longer ready (SealedSecretWatch), never a silent acceptance; in
 * `keys encrypt`, a refusal.
 */
export function openFactorSecret(stored: string, factorId: string, encryption: KeyEncryptionKey | undefined): string {
  return openSecret(stored, factor(factorId), encryption);
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
