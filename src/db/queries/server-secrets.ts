import type { Db } from '../database.js';

/**
 * The secret of that name, created with `candidate` if there is none yet. Of instances starting
 * at once, the first insert wins and every instance reads back the same value.
 */
export async function ensureServerSecret(db: Db, name: string, candidate: string): Promise<string> {
  await db
    .insertInto('server_secrets')
    .values({ name, value: candidate })
    .onConflict((conflict) => conflict.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('server_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return row.value;
}
