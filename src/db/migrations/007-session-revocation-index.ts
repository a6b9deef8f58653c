import type { Kysely, Migration } from 'kysely';

/**
 * The revocation feed (GET /auth/revocations) reads the sessions ended within the last access-token
 * lifetime on every poll of every verifier of the platform: an index keeps that a range scan of a
 * few rows instead of a scan of every session ever created.
 */
export const sessionRevocationIndex: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createIndex('sessions_revoked_at').on('sessions').columns(['revoked_at', 'id']).execute();
  },
};
