import type { Kysely, Migration } from 'kysely';

/**
 * Sign-in with a passkey alone (docs/second-factor.md, "Passkey sign-in").
 * - `schools.passkey_policy`: `allowed` (the default: password or passkey), `required` (an admin
 *   with a discoverable passkey signs in with it, not with the password) or `off`.
 * - `mfa_factors.discoverable`: 1 when the browser said the passkey is discoverable (`credProps`)
 *   or it signed in alone, 0 when the browser said it is not, null when nobody said.
 * - `passkey_used_challenges`: the digest of every passkey sign-in challenge accepted, until it
 *   would have expired anyway; the options request writes nothing (the challenge is sealed).
 */
export const passkeySignIn: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('schools').addColumn('passkey_policy', 'text', (col) => col.notNull().defaultTo('allowed')).execute();
    await db.schema.alterTable('mfa_factors').addColumn('discoverable', 'integer').execute();
    await db.schema
      .createTable('passkey_used_challenges')
      .addColumn('challenge_hash', 'text', (col) => col.primaryKey())
      .addColumn('expires_at', 'bigint', (col) => col.notNull())
      .execute();
  },
};
