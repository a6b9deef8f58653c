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
