import type { Kysely, Migration } from 'kysely';

/**
 * A signing key can be withdrawn before its time (`keys revoke`, after a leak): from `revoked_at`
 * on it neither signs nor verifies, and it leaves the JWKS. Null for a key that was never revoked.
 */
export const signingKeyRevocation: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('signing_keys').addColumn('revoked_at', 'bigint').execute();
  },
};
