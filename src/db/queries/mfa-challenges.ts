import type { ExpressionBuilder, Insertable, Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { DatabaseSchema } from '../schema/index.js';
import type { MfaChallengesTable } from '../schema/mfa-challenges.js';

type MfaChallenge = Selectable<MfaChallengesTable>;

/** What an mfa_token was issued for: answering a sign-in, or enrolling the first factor. */
export type ChallengePurpose = 'login' | 'enroll';

/** An mfa_token as it is used: its digest and the one purpose the use needs. */
export interface ChallengeRef {
  readonly tokenHash: string;
  readonly purpose: ChallengePurpose;
}

/** Wrong codes an mfa_token survives: the fifth ends it. */
const CHALLENGE_MAX_FAILURES = 5;

export async function insertChallenge(db: Db, challenge: Insertable<MfaChallengesTable>): Promise<void> {
  await db.insertInto('mfa_challenges').values(challenge).execute();
}

/**
 * The conditions of every use of an mfa_token: its digest and purpose, unused, unexpired, and
 * issued at its admin's current credential epoch. An operator's password change, disable, revoke,
 * suspend or reset moves the epoch on, so one comparison ends every pending mfa_token, and each
 * use decides it in its own statement, whatever happens between two of them.
 */
function usable(eb: ExpressionBuilder<DatabaseSchema, 'mfa_challenges'>, ref: ChallengeRef, now: number) {
  const adminEpoch = eb.selectFrom('admins').select('admins.credential_epoch').whereRef('admins.id', '=', 'mfa_challenges.admin_id');
  return eb.and([
    eb('mfa_challenges.token_hash', '=', ref.tokenHash),
    eb('mfa_challenges.purpose', '=', ref.purpose),
    eb('mfa_challenges.consumed_at', 'is', null),
    eb('mfa_challenges.expires_at', '>', now),
    eb('mfa_challenges.credential_epoch', '=', adminEpoch),
  ]);
}

/** A challenge that may still be answered at `now`: usable and not failed 5 times. */
export function findLiveChallenge(db: Db, ref: ChallengeRef, now: number): Promise<MfaChallenge | undefined> {
  return db
    .selectFrom('mfa_challenges')
    .selectAll()
    .where((eb) => usable(eb, ref, now))
    .where('failures', '<', CHALLENGE_MAX_FAILURES)
    .executeTakeFirst();
}

/** An update of an mfa_token's challenge that applies only while it is usable. */
function updateOpenChallenge(db: Db, ref: ChallengeRef, now: number) {
  return db.updateTable('mfa_challenges').where((eb) => usable(eb, ref, now));
}

/**
 * Takes one guess from a challenge before the code is checked, counted as a failure until it
 * proves right: parallel guesses cannot exceed 5, whatever their order. Returns false when the
 * challenge is dead.
 */
export async function takeChallengeGuess(db: Db, ref: ChallengeRef, now: number): Promise<boolean> {
  const result = await updateOpenChallenge(db, ref, now)
    .set((eb) => ({ failures: eb('failures', '+', 1) }))
    .where('failures', '<', CHALLENGE_MAX_FAILURES)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Ends a challenge on success; of two concurrent right answers only one gets true. */
export async function consumeChallenge(db: Db, ref: ChallengeRef, now: number): Promise<boolean> {
  const result = await updateOpenChallenge(db, ref, now)
    .set((eb) => ({ consumed_at: now, failures: eb('failures', '-', 1) }))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Gives a live sign-in a WebAuthn challenge, replacing any earlier one; false when it is dead. */
export async function saveSignInChallenge(db: Db, ref: ChallengeRef, challenge: string, now: number): Promise<boolean> {
  const result = await updateOpenChallenge(db, ref, now)
    .set({ webauthn_challenge: challenge })
    .where('failures', '<', CHALLENGE_MAX_FAILURES)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Takes a sign-in's WebAuthn challenge once: a replayed assertion finds it gone. */
export async function takeSignInChallenge(db: Db, ref: ChallengeRef, challenge: string, now: number): Promise<boolean> {
  const result = await updateOpenChallenge(db, ref, now)
    .set({ webauthn_challenge: null })
    .where('webauthn_challenge', '=', challenge)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Expired challenges, for housekeeping (with the digests of used passkey sign-in challenges); and
 * all of an admin's, when their factors are reset: sign-ins waiting for a second factor and
 * pending passkey registrations alike.
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
  if ('expiredBefore' in scope) {
    const used = await db.deleteFrom('passkey_used_challenges').where('expires_at', '<=', scope.expiredBefore).executeTakeFirst();
    deleted += used.numDeletedRows;
  }
  return Number(deleted);
}
