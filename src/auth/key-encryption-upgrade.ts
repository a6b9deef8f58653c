import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { replacePrivateJwk } from '../db/queries/signing-key-storage.js';
import { listSigningKeys } from '../db/queries/signing-keys.js';
import { UsageError } from '../errors.js';
import { CLI_CONTEXT, recordEvent } from './audit.js';
import { checkStoredKeysOpen, isSealed, sealPrivateJwk } from './key-encryption.js';

export interface KeyEncryptionUpgrade {
  /** The keys this run encrypted; empty when there was nothing left to do. */
  readonly encrypted: readonly string[];
  /** Keys that were encrypted already. */
  readonly alreadyEncrypted: number;
}

type UpgradeContext = {
  readonly db: Db;
  readonly clock: Clock;
  readonly config: Pick<Config, 'keyEncryption'>;
};

/**
 * Encrypts every private signing key still stored in plaintext under KEY_ENCRYPTION_KEY_FILE
 * (`keys encrypt`, when encryption is turned on for an existing install). Idempotent: a second
 * run changes nothing and records nothing. Refused, before anything changes, when a key is already
 * encrypted under another key file, since the server could then read only part of them.
 */
export async function encryptStoredSigningKeys(context: UpgradeContext): Promise<KeyEncryptionUpgrade> {
  const encryption = context.config.keyEncryption;
  if (encryption === undefined) {
    throw new UsageError('keys encrypt needs KEY_ENCRYPTION_KEY_FILE: set it to the key file the server reads');
  }
  return context.db.transaction().execute(async (trx) => {
    const rows = await listSigningKeys(trx);
    checkStoredKeysOpen(rows, encryption);
    const encrypted: string[] = [];
    for (const row of rows.filter(({ private_jwk }) => !isSealed(private_jwk))) {
      const sealed = sealPrivateJwk(row.private_jwk, row.kid, encryption);
      if (await replacePrivateJwk(trx, row.kid, row.private_jwk, sealed)) encrypted.push(row.kid);
    }
    const alreadyEncrypted = rows.length - encrypted.length;
    if (encrypted.length === 0) return { encrypted, alreadyEncrypted };
    await recordEvent(trx, context.clock, CLI_CONTEXT, { type: 'keys.encrypted', detail: `private keys encrypted at rest: ${encrypted.join(', ')}` });
    return { encrypted, alreadyEncrypted };
  });
}
