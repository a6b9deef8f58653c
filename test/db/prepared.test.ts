import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { prepareQuery } from '../../src/db/prepared.js';
import { TEST_DIALECTS, createTestDatabase } from '../helpers/database.js';

const findSchoolName = prepareQuery((db: Db, key: string) => db.selectFrom('schools').select('name').where('key', '=', key));

describe.each(TEST_DIALECTS)('prepared queries on %s', (dialect) => {
  it('run once compiled with each call’s own arguments, inside and outside a transaction', async () => {
    const database = await createTestDatabase(dialect);
    try {
      await migrateToLatest(database);
      await database.db
        .insertInto('schools')
        .values([
          { key: 'a', school_id: 'a', name: 'Alpha', suspended_at: null, created_at: 1 },
          { key: 'b', school_id: 'b', name: 'Beta', suspended_at: null, created_at: 1 },
        ])
        .execute();
      expect((await findSchoolName(database.db, 'a')).rows).toEqual([{ name: 'Alpha' }]);
      expect((await findSchoolName(database.db, 'b')).rows).toEqual([{ name: 'Beta' }]);
      const inTransaction = await database.db.transaction().execute((trx) => findSchoolName(trx, 'b'));
      expect(inTransaction.rows).toEqual([{ name: 'Beta' }]);
      expect((await findSchoolName(database.db, 'nope')).rows).toEqual([]);
    } finally {
      await database.close();
    }
  });

  it('refuses a query whose argument is not a bound parameter', async () => {
    const database = await createTestDatabase(dialect);
    try {
      const unbound = prepareQuery((db: Db, _key: string) => db.selectFrom('schools').select('name'));
      expect(() => unbound(database.db, 'a')).toThrow(/bound parameter/);
    } finally {
      await database.close();
    }
  });
});
