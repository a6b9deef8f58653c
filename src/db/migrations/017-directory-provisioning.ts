import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Directory provisioning by SCIM 2.0 (docs/scim.md).
 * - `scim_tokens`: a school's bearer tokens, as SHA-256 digests; several per school for rotation.
 * - `admins.external_id`: the directory's id for the admin, unique in the school;
 *   `admins.scim_profile`: the User attributes the directory sent that have no column (name,
 *   emails with their types, title...), as JSON; `admins.modified_at`: SCIM's `meta.lastModified`.
 * - `admins.deleted_at`: a deleted admin's row stays, disabled and renamed out of the way, while its
 *   ended sessions are still in the revocation feed; `prune` removes it after.
 * - `admin_emails.type`: the directory's label of an address (`work`...), for `emails[type eq ...]`;
 *   `admin_emails_address`: `emails.value eq` filters (without case) answer from an index.
 */
export const directoryProvisioning: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('scim_tokens')
      .addColumn('id', 'text', (col) => col.primaryKey())
      .addColumn('school_key', 'text', (col) => col.notNull().references('schools.key'))
      .addColumn('token_hash', 'text', (col) => col.notNull().unique())
      .addColumn('label', 'text')
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .addColumn('last_used_at', 'bigint')
      .execute();
    await db.schema.alterTable('admins').addColumn('external_id', 'text').execute();
    await db.schema.alterTable('admins').addColumn('scim_profile', 'text').execute();
    await db.schema.alterTable('admins').addColumn('modified_at', 'bigint').execute();
    await db.schema.alterTable('admins').addColumn('deleted_at', 'bigint').execute();
    await db.schema.createIndex('admins_school_external_id').unique().on('admins').columns(['school_key', 'external_id']).execute();
    await db.schema.alterTable('admin_emails').addColumn('type', 'text').execute();
    await db.schema.createIndex('admin_emails_address').on('admin_emails').expression(sql`lower(address)`).execute();
  },
};
