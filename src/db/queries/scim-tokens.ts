import type { Insertable } from 'kysely';
import type { Db } from '../database.js';
import type { ScimTokensTable } from '../schema/scim-tokens.js';

export interface ScimTokenListing {
  readonly id: string;
  readonly school_id: string;
  readonly label: string | null;
  readonly created_at: number;
  readonly last_used_at: number | null;
}

export async function insertScimToken(db: Db, token: Insertable<ScimTokensTable>): Promise<void> {
  await db.insertInto('scim_tokens').values(token).execute();
}

export function listScimTokens(db: Db, schoolKey?: string): Promise<ScimTokenListing[]> {
  let query = db
    .selectFrom('scim_tokens')
    .innerJoin('schools', 'schools.key', 'scim_tokens.school_key')
    .select(['scim_tokens.id', 'schools.school_id', 'scim_tokens.label', 'scim_tokens.created_at', 'scim_tokens.last_used_at'])
    .orderBy('scim_tokens.created_at')
    .orderBy('scim_tokens.id');
  if (schoolKey !== undefined) query = query.where('scim_tokens.school_key', '=', schoolKey);
  return query.execute();
}

/** Deletes a token in one statement; what it was, or undefined when there was none. */
export function deleteScimToken(db: Db, id: string) {
  return db.deleteFrom('scim_tokens').where('id', '=', id).returning(['id', 'school_key']).executeTakeFirst();
}

/** The token with this digest and its school. */
export function findScimToken(db: Db, tokenHash: string) {
  return db
    .selectFrom('scim_tokens')
    .innerJoin('schools', 'schools.key', 'scim_tokens.school_key')
    .select(['scim_tokens.id', 'scim_tokens.school_key', 'schools.school_id', 'scim_tokens.last_used_at'])
    .where('scim_tokens.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** Records a use, at most once a minute per token: a sync of thousands of requests writes a handful of times. */
export async function touchScimToken(db: Db, id: string, now: number): Promise<void> {
  await db
    .updateTable('scim_tokens')
    .set({ last_used_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', now - 60)]))
    .execute();
}
