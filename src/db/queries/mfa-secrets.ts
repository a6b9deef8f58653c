import type { Db } from '../database.js';

/**
 * The stored secret of every TOTP factor, confirmed or not: what `keys encrypt` seals. Other
 * factor types (WebAuthn: an empty secret and a public key) have no secret to seal.
 */
export function listTotpSecrets(db: Db): Promise<{ id: string; secret: string }[]> {
  return db.selectFrom('mfa_factors').select(['id', 'secret']).where('type', '=', 'totp').orderBy('id').execute();
}

/**
 * Replaces a TOTP factor's stored secret, only if it still holds `from`: decided by this one
 * statement, so a secret written since it was read (another run of `keys encrypt`, a change to
 * the factor) is never overwritten with a sealed copy of the old one.
 */
export async function replaceTotpSecret(db: Db, factorId: string, from: string, to: string): Promise<boolean> {
  const result = await db
    .updateTable('mfa_factors')
    .set({ secret: to })
    .where('id', '=', factorId)
    .where('type', '=', 'totp')
    .where('secret', '=', from)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
