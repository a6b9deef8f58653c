import type { Kysely, Migration } from 'kysely';

/**
 * Each counter carries the time before which it refuses attempts, written by the same statement
 * that counts the attempt: the check and the count are one atomic step.
 */
export const throttleBlockedUntil: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('throttle_counters')
      .addColumn('blocked_until', 'bigint', (col) => col.notNull().defaultTo(0))
      .execute();
  },
};
