import { sql } from 'kysely';
import { dialectOf, type Db } from '../database.js';
import type { MfaFactor } from './mfa-factors.js';

/** Stores the challenge of an admin's registration options, replacing any earlier one. */
export async function saveRegistrationChallenge(db: Db, adminId: string, challenge: string, expiresAt: number): Promise<void> {
  await db
    .insertInto('webauthn_registrations')
    .values({ admin_id: adminId, challenge, expires_at: expiresAt })
    .onConflict((oc) => oc.column('admin_id').doUpdateSet({ challenge, expires_at: expiresAt }))
    .execute();
}

/** Takes a registration challenge once: of two registrations answering it, one gets true. */
export async function takeRegistrationChallenge(db: Db, adminId: string, challenge: string, now: number): Promise<boolean> {
  const result = await db
    .deleteFrom('webauthn_registrations')
    .where('admin_id', '=', adminId)
    .where('challenge', '=', challenge)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** A confirmed passkey of an admin by its credential id. */
export function findCredential(db: Db, adminId: string, credentialId: string): Promise<MfaFactor | undefined> {
  return db
    .selectFrom('mfa_factors')
    .selectAll()
    .where('admin_id', '=', adminId)
    .where('type', '=', 'webauthn')
    .where('credential_id', '=', credentialId)
    .where('confirmed_at', 'is not', null)
    .executeTakeFirst();
}

/**
 * Moves a passkey's signature counter from the value the assertion was verified against to the
 * new one: of two assertions verified against the same counter, only one advances it.
 */
export async function advanceSignCount(db: Db, factorId: string, previous: number, next: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('mfa_factors')
    .set({ sign_count: next, last_used_at: now })
    .where('id', '=', factorId)
    .where('sign_count', '=', previous)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

interface NewPasskey {
  readonly id: string;
  readonly admin_id: string;
  readonly name: string;
  readonly created_at: number;
  readonly credential_id: string;
  readonly public_key: string;
  readonly sign_count: number;
  readonly transports: string;
  readonly device_type: string;
  readonly enrolled_ip: string | null;
  readonly discoverable: number | null;
}

/**
 * Stores a verified passkey, confirmed at once, only while the admin is at the credential epoch
 * the bearer was checked at: an operator's `admin mfa reset` (or anything else that ends the
 * admin's sessions) committed meanwhile leaves no passkey behind. On PostgreSQL the read of the
 * admin's row waits for such a transaction, then sees what it committed. False, having written
 * nothing, when the epoch moved or the credential id is already stored.
 */
export async function insertPasskey(db: Db, passkey: NewPasskey, credentialEpoch: number): Promise<boolean> {
  const text = (value: string) => sql<string>`cast(${value} as text)`;
  const bigint = (value: number) => sql<number>`cast(${value} as bigint)`;
  const result = await db
    .insertInto('mfa_factors')
    .columns(['id', 'admin_id', 'type', 'name', 'secret', 'confirmed_at', 'created_at', 'credential_id', 'public_key', 'sign_count', 'transports', 'device_type', 'enrolled_ip', 'discoverable'])
    .expression((eb) => {
      const owner = eb
        .selectFrom('admins')
        .select([
          text(passkey.id).as('id'),
          'admins.id as admin_id',
          text('webauthn').as('type'),
          text(passkey.name).as('name'),
          text('').as('secret'),
          bigint(passkey.created_at).as('confirmed_at'),
          bigint(passkey.created_at).as('created_at'),
          text(passkey.credential_id).as('credential_id'),
          text(passkey.public_key).as('public_key'),
          bigint(passkey.sign_count).as('sign_count'),
          text(passkey.transports).as('transports'),
          text(passkey.device_type).as('device_type'),
          sql<string | null>`cast(${passkey.enrolled_ip} as text)`.as('enrolled_ip'),
          sql<number | null>`cast(${passkey.discoverable} as integer)`.as('discoverable'),
        ])
        .where('admins.id', '=', passkey.admin_id)
        .where('admins.credential_epoch', '=', credentialEpoch);
      return dialectOf(db) === 'postgres' ? owner.forShare() : owner;
    })
    .onConflict((oc) => oc.column('credential_id').doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}
