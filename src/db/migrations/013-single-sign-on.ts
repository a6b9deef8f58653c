import type { Kysely, Migration } from 'kysely';

/**
 * Sign-in with the district's OpenID Connect provider (docs/sso.md).
 * - `sso_settings`: one per school; the client secret sealed like signing keys when a key file is set.
 * - `sso_links`: which IdP identity may sign in as which admin. An email link waits for the first
 *   sign-in with that verified email and then holds `(issuer, subject)`; from then on only that
 *   pair matches. The unique index on `(issuer, subject)` makes one identity one admin.
 * - `sso_used_states`: the digest of every state a callback consumed, until it expires: `start`
 *   writes nothing, so the single use of a state is decided by this insert at the callback.
 * - `sso_login_codes`: the one-minute codes the front end exchanges, stored as SHA-256 digests.
 * - `server_secrets`: the random key that seals `state` when no key file is configured.
 * - `sso_callback_failures`: failed callbacks per client IP, for the callback's throttle.
 * - `sessions.sso_*` and `mfa_challenges.sso_*`: the IdP identity and session a session was signed
 *   in with (for back-channel logout and SSO_SESSION_MAX_AGE), kept across a second factor.
 */
export const singleSignOn: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('sso_settings')
      .addColumn('school_key', 'text', (col) => col.primaryKey().references('schools.key'))
      .addColumn('provider', 'text', (col) => col.notNull())
      .addColumn('issuer', 'text', (col) => col.notNull())
      .addColumn('client_id', 'text', (col) => col.notNull())
      .addColumn('client_secret', 'text', (col) => col.notNull())
      .addColumn('domains', 'text')
      .addColumn('tenant', 'text')
      .addColumn('district', 'text')
      .addColumn('password_login', 'integer', (col) => col.notNull().defaultTo(1))
      .addColumn('trust_idp_mfa', 'integer', (col) => col.notNull().defaultTo(0))
      .addColumn('updated_at', 'bigint', (col) => col.notNull())
      .execute();

    await db.schema
      .createTable('sso_links')
      .addColumn('admin_id', 'text', (col) => col.primaryKey().references('admins.id'))
      .addColumn('school_key', 'text', (col) => col.notNull())
      .addColumn('email', 'text')
      .addColumn('issuer', 'text')
      .addColumn('subject', 'text')
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .addColumn('linked_at', 'bigint')
      .execute();
    await db.schema.createIndex('sso_links_identity').on('sso_links').columns(['issuer', 'subject']).unique().execute();
    await db.schema.createIndex('sso_links_email').on('sso_links').columns(['school_key', 'email']).unique().execute();

    await db.schema
      .createTable('sso_used_states')
      .addColumn('state_hash', 'text', (col) => col.primaryKey())
      .addColumn('expires_at', 'bigint', (col) => col.notNull())
      .execute();

    await db.schema
      .createTable('sso_login_codes')
      .addColumn('code_hash', 'text', (col) => col.primaryKey())
      .addColumn('admin_id', 'text', (col) => col.notNull().references('admins.id'))
      .addColumn('code_challenge', 'text', (col) => col.notNull())
      .addColumn('credential_epoch', 'integer', (col) => col.notNull())
      .addColumn('idp_mfa', 'integer', (col) => col.notNull())
      .addColumn('issuer', 'text', (col) => col.notNull())
      .addColumn('subject', 'text', (col) => col.notNull())
      .addColumn('idp_session', 'text')
      .addColumn('expires_at', 'bigint', (col) => col.notNull())
      .addColumn('used_at', 'bigint')
      .execute();

    await db.schema
      .createTable('server_secrets')
      .addColumn('name', 'text', (col) => col.primaryKey())
      .addColumn('value', 'text', (col) => col.notNull())
      .execute();

    await db.schema
      .createTable('sso_callback_failures')
      .addColumn('ip', 'text', (col) => col.primaryKey())
      .addColumn('window_start', 'bigint', (col) => col.notNull())
      .addColumn('failures', 'integer', (col) => col.notNull())
      .execute();

    for (const table of ['sessions', 'mfa_challenges']) {
      await db.schema.alterTable(table).addColumn('sso_issuer', 'text').execute();
      await db.schema.alterTable(table).addColumn('sso_subject', 'text').execute();
      await db.schema.alterTable(table).addColumn('sso_session', 'text').execute();
    }
    await db.schema.createIndex('sessions_sso_subject').on('sessions').columns(['sso_issuer', 'sso_subject']).execute();
  },
};
