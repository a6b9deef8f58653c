import type { Kysely, Migration } from 'kysely';

/**
 * Erasure with a trail that still proves itself (docs/audit-trail.md, "Erasure").
 * - `events.personal_salt`, `events.personal_digest`: an event's personal data (username, client
 *   address, user agent, detail) is sealed through its digest, SHA-256 over a random salt and the
 *   fields; erasing the fields and the salt leaves a digest that proves nothing about them and a
 *   chain that still verifies. Events written before this migration have neither (null): they are
 *   sealed as they always were.
 * - `events.erased_at`: when the event's personal data was erased.
 * - `admins.erased_at`: when the admin's personal data was erased; an event about them written
 *   afterwards is stored erased.
 * - `events_admin_id`: erasure and `admin export` find an admin's events.
 */
export const erasure: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('events').addColumn('personal_salt', 'text').execute();
    await db.schema.alterTable('events').addColumn('personal_digest', 'text').execute();
    await db.schema.alterTable('events').addColumn('erased_at', 'bigint').execute();
    await db.schema.alterTable('admins').addColumn('erased_at', 'bigint').execute();
    await db.schema.createIndex('events_admin_id').on('events').column('admin_id').execute();
  },
};
