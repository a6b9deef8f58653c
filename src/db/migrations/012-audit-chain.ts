import { sql, type Kysely, type Migration } from 'kysely';

/** The hash before the first sealed event; auth/audit/canonical-event.ts names it too. */
const GENESIS_HASH = '0'.repeat(64);

/**
 * The sealed audit chain (docs/audit-trail.md). Events stay as they are written; the sealer gives each
 * a `seq` and a chained `hash`, and ends every batch with a signed row in `audit_checkpoints`.
 * `audit_sealer` is one row: the chain's head and how far `prune` cut it. Every batch starts by
 * updating that row, so across instances one batch at a time holds it (a row lock on
 * PostgreSQL, the write lock on SQLite).
 */
export const auditChain: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('events').addColumn('seq', 'bigint').execute();
    await db.schema.alterTable('events').addColumn('hash', 'text').execute();
    await db.schema.createIndex('events_seq').on('events').column('seq').unique().execute();
    // The sealer's work list: small, since sealed rows leave it.
    await db.schema.createIndex('events_unsealed').on('events').column('id').where(sql.ref('seq'), 'is', null).execute();
    await db.schema.createIndex('events_at').on('events').column('at').execute();

    await db.schema
      .createTable('audit_checkpoints')
      .addColumn('seq', 'bigint', (col) => col.primaryKey())
      .addColumn('hash', 'text', (col) => col.notNull())
      .addColumn('sealed_at', 'bigint', (col) => col.notNull())
      .addColumn('covers_before', 'bigint', (col) => col.notNull())
      .addColumn('previous', 'bigint', (col) => col.notNull())
      .addColumn('kid', 'text', (col) => col.notNull())
      .addColumn('jws', 'text', (col) => col.notNull())
      .execute();

    await db.schema
      .createTable('audit_sealer')
      .addColumn('id', 'integer', (col) => col.primaryKey())
      .addColumn('seq', 'bigint', (col) => col.notNull())
      .addColumn('hash', 'text', (col) => col.notNull())
      .addColumn('checkpoint_seq', 'bigint', (col) => col.notNull())
      .addColumn('pruned_through', 'bigint', (col) => col.notNull())
      .addColumn('claimed_at', 'bigint', (col) => col.notNull())
      .execute();
    await db
      .insertInto('audit_sealer' as never)
      .values({ id: 1, seq: 0, hash: GENESIS_HASH, checkpoint_seq: 0, pruned_through: 0, claimed_at: 0 })
      .execute();
  },
};
