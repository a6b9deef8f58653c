import type { KeyEncryptionKey } from '../../config/key-encryption-key.js';
import type { Db } from '../../db/database.js';
import { listSsoSettings } from '../../db/queries/sso-settings.js';
import { KeyEncryptionError } from '../keys/key-encryption.js';
import { isSealed, openSealedText, sealText } from '../keys/sealed-text.js';

/** The school is authenticated with the ciphertext: a sealed secret copied to another school never opens. */
function labelOf(schoolKey: string): string {
  return `school-auth sso client secret ${schoolKey}`;
}

/** Seals the IdP client secret under KEY_ENCRYPTION_KEY_FILE when one is set, as signing keys are. */
export function sealClientSecret(secret: string, schoolKey: string, encryption: KeyEncryptionKey | undefined): string {
  if (encryption === undefined) return secret;
  return sealText(secret, labelOf(schoolKey), encryption.key);
}

/** The stored client secret in clear; the error names the school and the key file, never the secret. */
export function openClientSecret(stored: string, schoolKey: string, encryption: KeyEncryptionKey | undefined): string {
  if (!isSealed(stored)) return stored;
  if (encryption === undefined) {
    throw new KeyEncryptionError(`the SSO client secret of school ${schoolKey} is stored encrypted: set KEY_ENCRYPTION_KEY_FILE to the key file it was encrypted with`);
  }
  const opened = openSealedText(stored, labelOf(schoolKey), encryption.key);
  if (opened !== undefined) return opened;
  throw new KeyEncryptionError(
    `the SSO client secret of school ${schoolKey} cannot be decrypted with KEY_ENCRYPTION_KEY_FILE ${encryption.file}: ` +
      'it is not the key file the secret was encrypted with, or the stored secret was altered',
  );
}

/**
 * Every school's stored client secret, each checked to open with `encryption`: the server refuses
 * to start, and `keys encrypt` to change anything, when one does not (as with TOTP secrets), rather
 * than failing the school's sign-ins long after the mistake.
 */
export async function listClientSecretsThatOpen(db: Db, encryption: KeyEncryptionKey | undefined) {
  const rows = await listSsoSettings(db);
  for (const row of rows) openClientSecret(row.client_secret, row.school_key, encryption);
  return rows;
}
