import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The revocation feed is ordered by a position the database hands out, not by `revoked_at`, which
 * each writer reads from its own clock (a CLI on another host, a second instance): a revocation
 * stamped by a clock that is behind would sort before a cursor already given out, and never be
 * listed. `revocation_sequence` holds the last position given out, in one row; sessions ended
 * before this migration share position 1, so a full read of the feed still lists them.
 * Pages are read along (revocation_seq, id); where the window starts, along (revoked_at,
 * revocation_seq) without reading the table, which replaces the index on (revoked_at, id).
 */
export const revocationSequence: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('revocation_sequence')
      .addColumn('id', 'integer', (col) => col.primaryKey())
      .addColumn('last_position', 'bigint', (col) => col.notNull())
      .execute();
    await sql`insert into revocation_sequence (id, last_position) values (1, 1)`.execute(db);
    await db.schema.alterTable('sessions').addColumn('revocation_seq', 'bigint').execute();
    await sql`update sessions set revocation_seq = 1 where revoked_at is not null`.execute(db);
    await db.schema.createIndex('sessions_revocation_seq').on('sessions').columns(['revocation_seq', 'id']).execute();
    await db.schema.dropIndex('sessions_revoked_at').execute();
    await db.schema.createIndex('sessions_revoked_at_seq').on('sessions').columns(['revoked_at', 'revocation_seq']).execute();
  },
};
