import type { Kysely, Migration } from 'kysely';

/**
 * A counter per admin that every operator action ending all of an admin's sessions moves on
 * (password change, disable, suspend, revoke-all). A session records the admin's epoch when it is
 * created, and is alive only while the two are equal: a login that verified the old password
 * before the action cannot leave a working session behind, whatever the order of statements.
 */
export const credentialEpoch: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('admins').addColumn('credential_epoch', 'integer', (col) => col.notNull().defaultTo(0)).execute();
    await db.schema.alterTable('sessions').addColumn('credential_epoch', 'integer', (col) => col.notNull().defaultTo(0)).execute();
  },
};
