import type { Kysely, Migration } from 'kysely';

/**
 * Second factors for administrators (docs/second-factor.md). Secrets are stored sealed when a key file is
 * configured; recovery codes and mfa_tokens only as SHA-256 digests. `sessions.acr`/`amr` keep the
 * assurance a session was signed in with, so a refresh issues tokens of the same level; sessions
 * that exist before this migration were signed in with a password only.
 */
export const secondFactor: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('schools').addColumn('mfa_policy', 'text', (col) => col.notNull().defaultTo('optional')).execute();
    await db.schema.alterTable('sessions').addColumn('acr', 'text', (col) => col.notNull().defaultTo('aal1')).execute();
    await db.schema.alterTable('sessions').addColumn('amr', 'text', (col) => col.notNull().defaultTo('pwd')).execute();

    await db.schema
      .createTable('mfa_factors')
      .addColumn('id', 'text', (col) => col.primaryKey())
      .addColumn('admin_id', 'text', (col) => col.notNull().references('admins.id'))
      .addColumn('type', 'text', (col) => col.notNull())
      .addColumn('name', 'text', (col) => col.notNull())
      .addColumn('secret', 'text', (col) => col.notNull())
      .addColumn('confirmed_at', 'bigint')
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .addColumn('last_used_at', 'bigint')
      .addColumn('last_used_step', 'bigint')
      .execute();
    await db.schema.createIndex('mfa_factors_admin').on('mfa_factors').column('admin_id').execute();

    await db.schema
      .createTable('mfa_recovery_codes')
      .addColumn('code_hash', 'text', (col) => col.primaryKey())
      .addColumn('admin_id', 'text', (col) => col.notNull().references('admins.id'))
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    await db.schema.createIndex('mfa_recovery_codes_admin').on('mfa_recovery_codes').column('admin_id').execute();

    await db.schema
      .createTable('mfa_challenges')
      .addColumn('token_hash', 'text', (col) => col.primaryKey())
      .addColumn('admin_id', 'text', (col) => col.notNull().references('admins.id'))
      .addColumn('purpose', 'text', (col) => col.notNull())
      .addColumn('credential_epoch', 'integer', (col) => col.notNull())
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .addColumn('expires_at', 'bigint', (col) => col.notNull())
      .addColumn('failures', 'integer', (col) => col.notNull().defaultTo(0))
      .addColumn('consumed_at', 'bigint')
      .execute();
    await db.schema.createIndex('mfa_challenges_admin').on('mfa_challenges').column('admin_id').execute();

    await db.schema
      .createTable('mfa_throttle')
      .addColumn('admin_id', 'text', (col) => col.primaryKey().references('admins.id'))
      .addColumn('window_start', 'bigint', (col) => col.notNull())
      .addColumn('failures', 'integer', (col) => col.notNull())
      .addColumn('consecutive', 'integer', (col) => col.notNull())
      .addColumn('locked_at', 'bigint')
      .execute();
  },
};
