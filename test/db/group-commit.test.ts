import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { inGroupCommit } from '../../src/db/group-commit.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { TEST_DIALECTS, createTestDatabase, schoolRow as school } from '../helpers/database.js';

describe.each(TEST_DIALECTS)('inGroupCommit on %s', (dialect) => {
  let database: Database;
  beforeEach(async () => {
    database = await createTestDatabase(dialect);
    await migrateToLatest(database);
  });
  afterEach(() => database.close());

  const keys = async () => (await database.db.selectFrom('schools').select('key').orderBy('key').execute()).map((row) => row.key);

  it('commits the works of one turn, each settled with its own result', async () => {
    const results = await Promise.all(
      ['a', 'b', 'c'].map((key) =>
        inGroupCommit(database.db, async (trx) => {
          await trx.insertInto('schools').values(school(key)).execute();
          return key.toUpperCase();
        }),
      ),
    );
    expect(results).toEqual(['A', 'B', 'C']);
    expect(await keys()).toEqual(['a', 'b', 'c']);
  });

  it('rolls back and rejects a failing work alone: the others of its group commit', async () => {
    await database.db.insertInto('schools').values(school('taken')).execute();
    const outcomes = await Promise.allSettled([
      inGroupCommit(database.db, (trx) => trx.insertInto('schools').values(school('a')).execute()),
      inGroupCommit(database.db, async (trx) => {
        await trx.insertInto('schools').values(school('half')).execute();
        await trx.insertInto('schools').values(school('taken')).execute();
      }),
      inGroupCommit(database.db, (trx) => trx.insertInto('schools').values(school('b')).execute()),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await keys()).toEqual(['a', 'b', 'taken']);
  });

  it("runs in the caller's transaction, and rolls back with it", async () => {
    await expect(
      database.db.transaction().execute(async (trx) => {
        await inGroupCommit(trx, (inner) => inner.insertInto('schools').values(school('a')).execute());
        expect((await trx.selectFrom('schools').select('key').execute()).map((row) => row.key)).toEqual(['a']);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await keys()).toEqual([]);
  });
});
