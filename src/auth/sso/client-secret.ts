import type { KeyEncryptionKey } from '../../config/key-encryption-key.js';
import type { Db } from '../../db/database.js';
import { listSsoSettings } from '../../db/queries/sso-settings.js';
import { openSecret, sealSecret, type SealedSecretOwner } from '../keys/key-encryption.js';

function clientSecretOf(schoolKey: string): SealedSecretOwner {
  return { label: `school-auth sso client secret ${schoolKey}`, name: `the SSO client secret of school ${schoolKey}` };
}

/** Seals the IdP client secret under KEY_ENCRYPTION_KEY_FILE when one is set, as signing keys are. */
export function sealClientSecret(secret: string, schoolKey: string, encryption: KeyEncryptionKey | undefined): string {
  return sealSecret(secret, clientSecretOf(schoolKey), encryption);
}

/** The stored client secret in clear (see openSecret); errors name the school, never the secret. */
export function openClientSecret(stored: string, schoolKey: string, encryption: KeyEncryptionKey | undefined): string {
  return openSecret(stored, clientSecretOf(schoolKey), encryption);
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
