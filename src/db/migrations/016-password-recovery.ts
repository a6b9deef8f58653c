import type { Kysely, Migration } from 'kysely';

/**
 * Password recovery by e-mail (docs/operations.md, "Password recovery").
 * - `password_recoveries`: an admin's one live recovery code, as its SHA-256 digest; a new one
 *   replaces it. `requests` counts the codes asked for since `window_start`, so one conditional
 *   upsert decides whether another may be mailed.
 * - `schools.password_recovery`: 1 lets the school's admins recover by e-mail (the default), 0 not.
 */
export const passwordRecovery: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('password_recoveries')
      .addColumn('admin_id', 'text', (col) => col.primaryKey().references('admins.id'))
      .addColumn('code_hash', 'text', (col) => col.notNull())
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .addColumn('expires_at', 'bigint', (col) => col.notNull())
      .addColumn('requests', 'integer', (col) => col.notNull())
      .addColumn('window_start', 'bigint', (col) => col.notNull())
      .execute();
    await db.schema.alterTable('schools').addColumn('password_recovery', 'integer', (col) => col.notNull().defaultTo(1)).execute();
  },
};
