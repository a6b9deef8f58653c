import type { Db } from '../database.js';

/**
 * Remembers that the admin signed in from `ip`. True when the address is new and the admin had
 * signed in from another one before (a first sign-in ever tells nothing). The insert decides
 * newness, so of two parallel sign-ins from one new address exactly one reports it.
 */
export async function rememberSignInAddress(db: Db, adminId: string, ip: string, now: number): Promise<boolean> {
  const inserted = await db
    .insertInto('sign_in_addresses')
    .values({ admin_id: adminId, ip, first_at: now, last_at: now })
    .onConflict((conflict) => conflict.columns(['admin_id', 'ip']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) {
    await db.updateTable('sign_in_addresses').set({ last_at: now }).where('admin_id', '=', adminId).where('ip', '=', ip).execute();
    return false;
  }
  const other = await db.selectFrom('sign_in_addresses').select('ip').where('admin_id', '=', adminId).where('ip', '!=', ip).limit(1).executeTakeFirst();
  return other !== undefined;
}

/** Forgets addresses not used since `before` (epoch seconds); returns how many. */
export async function deleteStaleSignInAddresses(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('sign_in_addresses').where('last_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
