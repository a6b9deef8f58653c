import { sql, type Selectable } from 'kysely';
import { dialectOf, inTransaction, type Db } from '../database.js';
import type { SigningKeysTable } from '../schema/signing-keys.js';

export type SigningKeyRow = Selectable<SigningKeysTable>;

export async function insertSigningKey(db: Db, key: SigningKeyRow): Promise<void> {
  await db.insertInto('signing_keys').values(key).execute();
}

/** Any constant: the advisory lock under which PostgreSQL instances decide who creates the first key. */
const FIRST_KEY_LOCK = 7_316_420_001;

/**
 * Stores `key` unless a key of its algorithm signs or waits to sign at `now` (the schedule of
 * key-schedule.ts: not revoked, and pending or the newest started key). One conditional
 * statement decides, so instances starting together on an empty database create one key between
 * them; on PostgreSQL, whose READ COMMITTED lets two such statements both see no key, it runs
 * under a transaction-scoped advisory lock. True when this call stored the key.
 */
export function insertSigningKeyUnlessOneSigns(db: Db, key: SigningKeyRow, now: number): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    if (dialectOf(db) === 'postgres') await sql`select pg_advisory_xact_lock(${FIRST_KEY_LOCK})`.execute(trx);
    const inserted = await sql`
      insert into signing_keys (kid, alg, private_jwk, public_jwk, created_at, active_from, revoked_at)
      select ${key.kid}, ${key.alg}, ${key.private_jwk}, ${key.public_jwk}, cast(${key.created_at} as bigint), cast(${key.active_from} as bigint), null
      where not exists (
        select 1 from signing_keys k
        where k.alg = ${key.alg} and k.revoked_at is null
          and (k.active_from > ${now}
            or k.active_from = (select max(s.active_from) from signing_keys s where s.revoked_at is null and s.active_from <= ${now}))
      )`.execute(trx);
    return Number(inserted.numAffectedRows ?? 0) > 0;
  });
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

/**
 * Replaces a key's stored private JWK, only if it still holds `from`: of two runs of
 * `keys encrypt` at once, one encrypts each key and the other sees that it found nothing to do.
 */
export async function replacePrivateJwk(db: Db, kid: string, from: string, to: string): Promise<boolean> {
  const result = await db.updateTable('signing_keys').set({ private_jwk: to }).where('kid', '=', kid).where('private_jwk', '=', from).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
