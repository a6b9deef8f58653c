import type { Kysely, Migration } from 'kysely';

/** State of brute-force throttling, shared by every instance through the database. */
export const loginThrottling: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('throttle_counters')
      .addColumn('key', 'text', (col) => col.primaryKey())
      .addColumn('account', 'text')
      .addColumn('window_start', 'bigint', (col) => col.notNull())
      .addColumn('failures', 'integer', (col) => col.notNull())
      .addColumn('last_failure_at', 'bigint', (col) => col.notNull())
      .addColumn('consecutive', 'integer', (col) => col.notNull())
      .execute();
    await db.schema.createIndex('throttle_counters_account').on('throttle_counters').column('account').execute();

    await db.schema
      .createTable('known_client_ips')
      .addColumn('account', 'text', (col) => col.notNull())
      .addColumn('ip', 'text', (col) => col.notNull())
      .addColumn('last_success_at', 'bigint', (col) => col.notNull())
      .addPrimaryKeyConstraint('known_client_ips_pk', ['account', 'ip'])
      .execute();
  },
};
