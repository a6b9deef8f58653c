import type { Kysely, Migration } from 'kysely';

/**
 * Notifications to administrators (e-mail) and to the platform (signed webhooks), docs/notifications.md.
 * - `admin_emails`: the addresses an admin is told at: set by an operator, or the verified e-mail
 *   the district's IdP asserted at a single sign-on.
 * - `webhooks`: the platform's endpoints; `secret` (and the previous secret while a rotation's
 *   overlap lasts) sealed under KEY_ENCRYPTION_KEY_FILE like the signing keys.
 * - `outbox`: one message per event and recipient, written in the transaction of the change it
 *   reports, then delivered at least once; the lease decides which instance delivers it.
 * - `outbox_attempts`: every delivery attempt, for `webhooks deliveries`.
 */
export const notifications: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('admin_emails')
      .addColumn('admin_id', 'text', (col) => col.notNull().references('admins.id'))
      .addColumn('address', 'text', (col) => col.notNull())
      .addColumn('source', 'text', (col) => col.notNull())
      .addColumn('added_at', 'bigint', (col) => col.notNull())
      .addPrimaryKeyConstraint('admin_emails_pkey', ['admin_id', 'address'])
      .execute();

    await db.schema
      .createTable('webhooks')
      .addColumn('id', 'text', (col) => col.primaryKey())
      .addColumn('url', 'text', (col) => col.notNull())
      .addColumn('events', 'text', (col) => col.notNull())
      .addColumn('school_key', 'text')
      .addColumn('secret', 'text', (col) => col.notNull())
      .addColumn('previous_secret', 'text')
      .addColumn('previous_until', 'bigint')
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .execute();

    await db.schema
      .createTable('outbox')
      .addColumn('id', 'text', (col) => col.primaryKey())
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .addColumn('type', 'text', (col) => col.notNull())
      .addColumn('channel', 'text', (col) => col.notNull())
      .addColumn('target', 'text', (col) => col.notNull())
      .addColumn('payload', 'text', (col) => col.notNull())
      .addColumn('state', 'text', (col) => col.notNull())
      .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'bigint', (col) => col.notNull())
      .addColumn('lease_owner', 'text')
      .addColumn('lease_until', 'bigint')
      .addColumn('last_error', 'text')
      .addColumn('finished_at', 'bigint')
      .execute();
    await db.schema.createIndex('outbox_due').on('outbox').columns(['state', 'next_attempt_at']).execute();
    await db.schema.createIndex('outbox_created').on('outbox').columns(['state', 'created_at']).execute();

    await db.schema
      .createTable('outbox_attempts')
      .addColumn('message_id', 'text', (col) => col.notNull())
      .addColumn('attempt', 'integer', (col) => col.notNull())
      .addColumn('at', 'bigint', (col) => col.notNull())
      .addColumn('ok', 'integer', (col) => col.notNull())
      .addColumn('status', 'integer')
      .addColumn('error', 'text')
      .addColumn('duration_ms', 'integer', (col) => col.notNull())
      .addPrimaryKeyConstraint('outbox_attempts_pkey', ['message_id', 'attempt'])
      .execute();
  },
};
