import type { Clock } from '../runtime/clock.js';
import type { Config } from '../config/config.js';
import type { Db } from '../db/database.js';
import { replaceTotpSecret } from '../db/queries/mfa-secrets.js';
import { listSigningKeys, replacePrivateJwk } from '../db/queries/signing-keys.js';
import { UsageError } from '../errors.js';
import { CLI_CONTEXT, recordEvent } from './events.js';
import { checkStoredKeysOpen, isSealed, sealPrivateJwk } from './keys/key-encryption.js';
import { listTotpSecretsThatOpen, sealFactorSecret } from './mfa/secret-box.js';
import { replaceClientSecret } from '../db/queries/sso-settings.js';
import { listClientSecretsThatOpen, sealClientSecret } from './sso/client-secret.js';

interface KeyEncryptionUpgrade {
  /** The signing keys this run encrypted; empty when there was nothing left to do. */
  readonly encrypted: readonly string[];
  /** Signing keys that were encrypted already. */
  readonly alreadyEncrypted: number;
  /** TOTP secrets this run sealed, and those sealed already. */
  readonly sealedTotp: number;
  readonly alreadySealedTotp: number;
  /** SSO client secrets this run sealed. */
  readonly sealedClientSecrets: number;
}

type UpgradeContext = {
  readonly db: Db;
  readonly clock: Clock;
  readonly config: Pick<Config, 'keyEncryption'>;
};

/**
 * Encrypts every private signing key and seals every TOTP secret and SSO client secret still stored in plaintext under
 * KEY_ENCRYPTION_KEY_FILE (`keys encrypt`, when encryption is turned on for an existing install),
 * in one transaction. Idempotent: a second run changes and records nothing. Refused, before
 * anything changes, when a key or secret is sealed under another key file, since the server could
 * then read only part of them. Each row is replaced by one conditional update, so of two runs at
 * once each row is sealed by one, and a row written since it was read is never overwritten.
 */
export async function encryptStoredSecrets(context: UpgradeContext): Promise<KeyEncryptionUpgrade> {
  const encryption = context.config.keyEncryption;
  if (encryption === undefined) {
    throw new UsageError('keys encrypt needs KEY_ENCRYPTION_KEY_FILE: set it to the key file the server reads');
  }
  return context.db.transaction().execute(async (trx) => {
    const secrets = await listTotpSecretsThatOpen(trx, encryption);
    const clientSecrets = await listClientSecretsThatOpen(trx, encryption);
    const keys = await listSigningKeys(trx);
    checkStoredKeysOpen(keys, encryption);
    const encrypted: string[] = [];
    for (const row of keys.filter(({ private_jwk }) => !isSealed(private_jwk))) {
      const sealed = sealPrivateJwk(row.private_jwk, row.kid, encryption);
      if (await replacePrivateJwk(trx, row.kid, row.private_jwk, sealed)) encrypted.push(row.kid);
    }
    let sealedTotp = 0;
    for (const row of secrets.filter(({ secret }) => !isSealed(secret))) {
      if (await replaceTotpSecret(trx, row.id, row.secret, sealFactorSecret(row.secret, row.id, encryption))) sealedTotp += 1;
    }
    let sealedClientSecrets = 0;
    for (const row of clientSecrets.filter(({ client_secret }) => !isSealed(client_secret))) {
      const sealed = sealClientSecret(row.client_secret, row.school_key, encryption);
      if (await replaceClientSecret(trx, row.school_key, row.client_secret, sealed)) sealedClientSecrets += 1;
    }
    const record = (detail: string) => recordEvent(trx, context.clock, CLI_CONTEXT, { type: 'keys.encrypted', detail });
    if (encrypted.length > 0) await record(`private keys encrypted at rest: ${encrypted.join(', ')}`);
    if (sealedTotp > 0) await record(`TOTP secrets encrypted at rest: ${sealedTotp}`);
    if (sealedClientSecrets > 0) await record(`SSO client secrets encrypted at rest: ${sealedClientSecrets}`);
    return { encrypted, alreadyEncrypted: keys.length - encrypted.length, sealedTotp, alreadySealedTotp: secrets.length - sealedTotp, sealedClientSecrets };
  });
}
