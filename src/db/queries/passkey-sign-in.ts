import type { Db } from '../database.js';
import type { MfaFactor } from './mfa-factors.js';

/**
 * A confirmed passkey by its credential id alone, whoever owns it: a passkey sign-in learns the
 * admin from it (and checks the user handle the browser sent against its owner).
 */
export function findPasskeyByCredentialId(db: Db, credentialId: string): Promise<MfaFactor | undefined> {
  return db
    .selectFrom('mfa_factors')
    .selectAll()
    .where('type', '=', 'webauthn')
    .where('credential_id', '=', credentialId)
    .where('confirmed_at', 'is not', null)
    .executeTakeFirst();
}

/** Records a sign-in challenge as accepted: of two sign-ins presenting it, on any instance, one gets true. */
export async function acceptPasskeyChallenge(db: Db, challengeHash: string, expiresAt: number): Promise<boolean> {
  const result = await db
    .insertInto('passkey_used_challenges')
    .values({ challenge_hash: challengeHash, expires_at: expiresAt })
    .onConflict((conflict) => conflict.column('challenge_hash').doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

/** A passkey that signed in alone is discoverable, whatever the browser said when it was registered. */
export async function markDiscoverable(db: Db, factorId: string): Promise<void> {
  await db
    .updateTable('mfa_factors')
    .set({ discoverable: 1 })
    .where('id', '=', factorId).where((eb) => eb.or([eb('discoverable', 'is', null), eb('discoverable', '<>', 1)]))
    .execute();
}

/** Whether the admin has a passkey known to sign in alone (a `required` school then refuses their password). */
export async function hasDiscoverablePasskey(db: Db, adminId: string): Promise<boolean> {
  const row = await db
    .selectFrom('mfa_factors')
    .select('id')
    .where('admin_id', '=', adminId)
    .where('type', '=', 'webauthn')
    .where('discoverable', '=', 1)
    .where('confirmed_at', 'is not', null)
    .executeTakeFirst();
  return row !== undefined;
}
