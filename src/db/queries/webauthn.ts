import type { Db } from '../database.js';
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

export interface NewPasskey {
  readonly id: string;
  readonly admin_id: string;
  readonly name: string;
  readonly created_at: number;
  readonly credential_id: string;
  readonly public_key: string;
  readonly sign_count: number;
  readonly transports: string;
  readonly device_type: string;
}

/** Stores a verified passkey, confirmed at once; false when its credential id is already stored. */
export async function insertPasskey(db: Db, passkey: NewPasskey): Promise<boolean> {
  const result = await db
    .insertInto('mfa_factors')
    .values({ ...passkey, type: 'webauthn', secret: '', confirmed_at: passkey.created_at, last_used_at: null, last_used_step: null })
    .onConflict((oc) => oc.column('credential_id').doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}
