import type { Kysely, Migration } from 'kysely';
import { dialectOf } from '../database.js';

/** The initial schema. Times are epoch seconds, except `events.at` (milliseconds). */
export const initial: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('schools')
      .addColumn('key', 'text', (col) => col.primaryKey())
      .addColumn('school_id', 'text', (col) => col.notNull())
      .addColumn('name', 'text', (col) => col.notNull())
      .addColumn('suspended_at', 'bigint')
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .execute();

    await db.schema
      .createTable('admins')
      .addColumn('id', 'text', (col) => col.primaryKey())
      .addColumn('school_key', 'text', (col) => col.notNull().references('schools.key'))
      .addColumn('username_key', 'text', (col) => col.notNull())
      .addColumn('username', 'text', (col) => col.notNull())
      .addColumn('password_hash', 'text', (col) => col.notNull())
      .addColumn('disabled_at', 'bigint')
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .addColumn('password_changed_at', 'bigint', (col) => col.notNull())
      .addUniqueConstraint('admins_school_username', ['school_key', 'username_key'])
      .execute();

    await db.schema
      .createTable('sessions')
      .addColumn('id', 'text', (col) => col.primaryKey())
      .addColumn('admin_id', 'text', (col) => col.notNull().references('admins.id'))
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .addColumn('last_used_at', 'bigint', (col) => col.notNull())
      .addColumn('expires_at', 'bigint', (col) => col.notNull())
      .addColumn('revoked_at', 'bigint')
      .addColumn('revoke_reason', 'text')
      .addColumn('ip', 'text')
      .addColumn('user_agent', 'text')
      .execute();
    await db.schema.createIndex('sessions_admin').on('sessions').column('admin_id').execute();

    await db.schema
      .createTable('refresh_tokens')
      .addColumn('token_hash', 'text', (col) => col.primaryKey())
      .addColumn('session_id', 'text', (col) => col.notNull().references('sessions.id'))
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .addColumn('consumed_at', 'bigint')
      .addColumn('successor_sealed', 'text')
      .execute();
    await db.schema.createIndex('refresh_tokens_session').on('refresh_tokens').column('session_id').execute();

    await db.schema
      .createTable('signing_keys')
      .addColumn('kid', 'text', (col) => col.primaryKey())
      .addColumn('alg', 'text', (col) => col.notNull())
      .addColumn('private_jwk', 'text', (col) => col.notNull())
      .addColumn('public_jwk', 'text', (col) => col.notNull())
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .addColumn('active_from', 'bigint', (col) => col.notNull())
      .execute();

    // The one dialect difference of the schema: how an auto-numbered key is spelled.
    const events = db.schema.createTable('events');
    await (
      dialectOf(db) === 'postgres'
        ? events.addColumn('id', 'bigserial', (col) => col.primaryKey())
        : events.addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement())
    )
      .addColumn('at', 'bigint', (col) => col.notNull())
      .addColumn('type', 'text', (col) => col.notNull())
      .addColumn('school_id', 'text')
      .addColumn('username', 'text')
      .addColumn('admin_id', 'text')
      .addColumn('session_id', 'text')
      .addColumn('ip', 'text')
      .addColumn('user_agent', 'text')
      .addColumn('detail', 'text')
      .execute();
    await db.schema.createIndex('events_school_at').on('events').columns(['school_id', 'at']).execute();
  },
};
