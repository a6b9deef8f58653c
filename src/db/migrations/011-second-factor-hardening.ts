import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Second factor hardened (docs/second-factor.md):
 * - `mfa_throttle` counts per (admin, scope): one row per client address the admin's second
 *   factor was tried from, and one (`new`) for every address the admin never signed in from,
 *   so failures elsewhere cannot refuse the owner at a known address. Existing rows, counted
 *   across all addresses, become the `new` row: a lock stays a lock for unknown addresses.
 * - `mfa_factors.enrolled_ip`: where a factor was enrolled from, for the incident runbook.
 * - `sessions.auth_time`: when the session last presented a second factor (step-up freshness).
 *   Sessions signed in with one before this version count from their start.
 */
export const secondFactorHardening: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('mfa_throttle_scoped')
      .addColumn('admin_id', 'text', (col) => col.notNull().references('admins.id'))
      .addColumn('scope', 'text', (col) => col.notNull())
      .addColumn('window_start', 'bigint', (col) => col.notNull())
      .addColumn('failures', 'integer', (col) => col.notNull())
      .addColumn('consecutive', 'integer', (col) => col.notNull())
      .addColumn('locked_at', 'bigint')
      .addPrimaryKeyConstraint('mfa_throttle_admin_scope_pkey', ['admin_id', 'scope'])
      .execute();
    await sql`insert into mfa_throttle_scoped (admin_id, scope, window_start, failures, consecutive, locked_at)
      select admin_id, 'new', window_start, failures, consecutive, locked_at from mfa_throttle`.execute(db);
    await db.schema.dropTable('mfa_throttle').execute();
    await db.schema.alterTable('mfa_throttle_scoped').renameTo('mfa_throttle').execute();

    await db.schema.alterTable('mfa_factors').addColumn('enrolled_ip', 'text').execute();

    await db.schema.alterTable('sessions').addColumn('auth_time', 'bigint').execute();
    await sql`update sessions set auth_time = created_at where acr = 'aal2'`.execute(db);
  },
};
