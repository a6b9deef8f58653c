import { test } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { prepareQuery } from '../../src/db/prepared.js';
import { createTestDatabase } from './database.js';

/** Prepared queries on the schools table, for tests of how statements reach SQLite. */
export const findSchoolName = prepareQuery((db: Db, key: string) => db.selectFrom('schools').select('name').where('key', '=', key));
export const insertSchool = prepareQuery((db: Db, key: string, name: string) =>
  db.insertInto('schools').values({ key, school_id: key, name, suspended_at: null, created_at: 1 }),
);
export const renameSchool = prepareQuery((db: Db, key: string, name: string) => db.updateTable('schools').set({ name }).where('key', '=', key));

/** `test` with a `db` fixture: a fresh, migrated SQLite database holding one school, key 'a', named Alpha. */
export const schoolTest = test.extend<{ db: Db }>({
  // eslint-disable-next-line no-empty-pattern
  db: async ({}, use) => {
    const database = await createTestDatabase('sqlite');
    try {
      await migrateToLatest(database);
      await insertSchool(database.db, 'a', 'Alpha');
      await use(database.db);
    } finally {
      await database.close();
    }
  },
});

/** A promise and the function that settles it. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => undefined as void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Lets every pending callback and I/O completion run, several times over. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

/** Tracks whether a promise has settled yet. */
export function watch<T>(promise: Promise<T>): { settled: () => boolean; result: Promise<T> } {
  let done = false;
  const result = promise.finally(() => (done = true));
  return { settled: () => done, result };
}
