import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { MfaChallengesTable } from '../schema/mfa-challenges.js';

export type MfaChallenge = Selectable<MfaChallengesTable>;

/** Wrong codes an mfa_token survives: the fifth ends it. */
export const CHALLENGE_MAX_FAILURES = 5;

export async function insertChallenge(db: Db, challenge: Insertable<MfaChallengesTable>): Promise<void> {
  await db.insertInto('mfa_challenges').values(challenge).execute();
}

/** A challenge that may still be answered at `now`: not used, not expired, not failed 5 times. */
export function findLiveChallenge(db: Db, tokenHash: string, now: number): Promise<MfaChallenge | undefined> {
  return db
    .selectFrom('mfa_challenges')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .where('failures', '<', CHALLENGE_MAX_FAILURES)
    .executeTakeFirst();
}

/** An update of an mfa_token's challenge that applies only while it is unused and unexpired. */
function updateOpenChallenge(db: Db, tokenHash: string, now: number) {
  return db.updateTable('mfa_challenges').where('token_hash', '=', tokenHash).where('consumed_at', 'is', null).where('expires_at', '>', now);
}

/**
 * Takes one guess from a challenge before the code is checked, counted as a failure until it
 * proves right: parallel guesses cannot exceed 5, whatever their order. Returns false when the
 * challenge is dead.
 */
export async function takeChallengeGuess(db: Db, tokenHash: string, now: number): Promise<boolean> {
  const result = await updateOpenChallenge(db, tokenHash, now)
    .set((eb) => ({ failures: eb('failures', '+', 1) }))
    .where('failures', '<', CHALLENGE_MAX_FAILURES)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Ends a challenge on success; of two concurrent right answers only one gets true. */
export async function consumeChallenge(db: Db, tokenHash: string, now: number): Promise<boolean> {
  const result = await updateOpenChallenge(db, tokenHash, now)
    .set((eb) => ({ consumed_at: now, failures: eb('failures', '-', 1) }))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Gives a live sign-in a WebAuthn challenge, replacing any earlier one; false when it is dead. */
export async function saveSignInChallenge(db: Db, tokenHash: string, challenge: string, now: number): Promise<boolean> {
  const result = await updateOpenChallenge(db, tokenHash, now)
    .set({ webauthn_challenge: challenge })
    .where('failures', '<', CHALLENGE_MAX_FAILURES)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Takes a sign-in's WebAuthn challenge once: a replayed assertion finds it gone. */
export async function takeSignInChallenge(db: Db, tokenHash: string, challenge: string, now: number): Promise<boolean> {
  const result = await updateOpenChallenge(db, tokenHash, now)
    .set({ webauthn_challenge: null })
    .where('webauthn_challenge', '=', challenge)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Expired challenges, for housekeeping; and all of an admin's, when their factors are reset:
 * sign-ins waiting for a second factor and pending passkey registrations alike.
 */
export async function deleteChallenges(db: Db, scope: { adminId: string } | { expiredBefore: number }): Promise<number> {
  let deleted = 0n;
  for (const table of ['mfa_challenges', 'webauthn_registrations'] as const) {
    const result = await db
      .deleteFrom(table)
      .where((eb) => ('adminId' in scope ? eb('admin_id', '=', scope.adminId) : eb('expires_at', '<=', scope.expiredBefore)))
      .executeTakeFirst();
    deleted += result.numDeletedRows;
  }
  return Number(deleted);
}
