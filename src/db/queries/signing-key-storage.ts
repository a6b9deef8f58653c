import type { Db } from '../database.js';

/**
 * Replaces a key's stored private JWK, only if it still holds `from`: of two runs of
 * `keys encrypt` at once, one encrypts each key and the other sees that it found nothing to do.
 */
export async function replacePrivateJwk(db: Db, kid: string, from: string, to: string): Promise<boolean> {
  const result = await db.updateTable('signing_keys').set({ private_jwk: to }).where('kid', '=', kid).where('private_jwk', '=', from).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
