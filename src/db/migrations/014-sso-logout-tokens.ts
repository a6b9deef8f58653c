import type { Kysely, Migration } from 'kysely';

/**
 * `sso_logout_tokens`: the `jti` (as a SHA-256 digest) of every back-channel logout token
 * accepted from an issuer, until the token could no longer be accepted anyway (OpenID Connect
 * Back-Channel Logout 1.0 §2.6): the insert decides that a token is used once, on every instance.
 */
export const ssoLogoutTokens: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('sso_logout_tokens')
      .addColumn('issuer', 'text', (col) => col.notNull())
      .addColumn('jti_hash', 'text', (col) => col.notNull())
      .addColumn('expires_at', 'bigint', (col) => col.notNull())
      .addPrimaryKeyConstraint('sso_logout_tokens_pkey', ['issuer', 'jti_hash'])
      .execute();
    await db.schema.createIndex('sso_logout_tokens_expiry').on('sso_logout_tokens').column('expires_at').execute();
  },
};
