import type { Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { SigningKeysTable } from '../schema/signing-keys.js';

export type SigningKeyRow = Selectable<SigningKeysTable>;

export async function insertSigningKey(db: Db, key: SigningKeyRow): Promise<void> {
  await db.insertInto('signing_keys').values(key).execute();
}

/** Oldest first: each key is superseded by the next one once that one is active. */
export function listSigningKeys(db: Db): Promise<SigningKeyRow[]> {
  return db.selectFrom('signing_keys').selectAll().orderBy('active_from').orderBy('created_at').orderBy('kid').execute();
}

/**
 * Marks a key revoked at `at`. One conditional statement decides: undefined when there is no such
 * key or it was already revoked, so two operators revoking at once record one revocation.
 */
export function markSigningKeyRevoked(db: Db, kid: string, at: number): Promise<SigningKeyRow | undefined> {
  return db.updateTable('signing_keys').set({ revoked_at: at }).where('kid', '=', kid).where('revoked_at', 'is', null).returningAll().executeTakeFirst();
}
