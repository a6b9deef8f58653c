import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { listTotpSecrets, replaceTotpSecret } from '../../db/queries/mfa-secrets.js';
import { UsageError } from '../../errors.js';
import type { KeyEncryptionKey } from '../../key-encryption-key.js';
import { CLI_CONTEXT, recordEvent } from '../audit.js';
import { KeyEncryptionError } from '../key-encryption.js';
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
 * (or with another) this throws, naming the factor and the file, never the secret. In a request
 * that is a 500 whose cause is logged, never a silent acceptance; in `keys encrypt`, a refusal.
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

export interface TotpSecretSealing {
  /** Secrets this run sealed. */
  readonly sealed: number;
  /** The other TOTP secrets: sealed already, or changed by someone else while this run read them. */
  readonly alreadySealed: number;
}

type SealingContext = {
  readonly db: Db;
  readonly clock: Clock;
  readonly config: Pick<Config, 'keyEncryption'>;
};

/**
 * Seals every TOTP secret still stored in plaintext (enrolled before KEY_ENCRYPTION_KEY_FILE was
 * configured) under the key file: `keys encrypt`. Idempotent: a second run changes and records
 * nothing. Refused before anything changes when a secret is sealed under another key file, since
 * the server could then open only part of them. Each secret is replaced by one conditional
 * update, so of two runs at once each secret is sealed by one, and a secret written since it was
 * read is never overwritten.
 */
export async function sealStoredTotpSecrets(context: SealingContext): Promise<TotpSecretSealing> {
  const encryption = context.config.keyEncryption;
  if (encryption === undefined) {
    throw new UsageError('keys encrypt needs KEY_ENCRYPTION_KEY_FILE: set it to the key file the server reads');
  }
  const rows = await listTotpSecrets(context.db);
  for (const row of rows) openFactorSecret(row.secret, row.id, encryption);
  let sealed = 0;
  for (const row of rows.filter(({ secret }) => !isSealed(secret))) {
    if (await replaceTotpSecret(context.db, row.id, row.secret, sealFactorSecret(row.secret, row.id, encryption))) sealed += 1;
  }
  const alreadySealed = rows.length - sealed;
  if (sealed === 0) return { sealed, alreadySealed };
  await recordEvent(context.db, context.clock, CLI_CONTEXT, { type: 'keys.encrypted', detail: `TOTP secrets encrypted at rest: ${sealed}` });
  return { sealed, alreadySealed };
}
