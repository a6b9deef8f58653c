import { inTransaction, type Db } from '../database.js';

/**
 * Replaces an admin's recovery codes with a new set, atomically: the old set stops working. Only
 * while the admin is at `credentialEpoch` (the bearer's): the first statement decides it and
 * holds the admin's row until commit, so an operator's reset or password change is either wholly
 * before (nothing written, false) or wholly after (it removes the set).
 */
export function replaceRecoveryCodes(db: Db, adminId: string, codeHashes: readonly string[], now: number, credentialEpoch: number): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const held = await trx
      .updateTable('admins')
      .set((eb) => ({ credential_epoch: eb.ref('credential_epoch') }))
      .where('id', '=', adminId)
      .where('credential_epoch', '=', credentialEpoch)
      .executeTakeFirst();
    if (held.numUpdatedRows === 0n) return false;
    await trx.deleteFrom('mfa_recovery_codes').where('admin_id', '=', adminId).execute();
    await trx
      .insertInto('mfa_recovery_codes')
      .values(codeHashes.map((codeHash) => ({ code_hash: codeHash, admin_id: adminId, created_at: now, used_at: null })))
      .execute();
    return true;
  });
}

/** Uses a recovery code once: one conditional update, so two requests with it cannot both win. */
export async function useRecoveryCode(db: Db, adminId: string, codeHash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('mfa_recovery_codes')
    .set({ used_at: now })
    .where('code_hash', '=', codeHash)
    .where('admin_id', '=', adminId)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function countRecoveryCodesLeft(db: Db, adminId: string): Promise<number> {
  const row = await db
    .selectFrom('mfa_recovery_codes')
    .select((eb) => eb.fn.countAll<string | number>().as('left'))
    .where('admin_id', '=', adminId)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(row?.left ?? 0);
}

export async function deleteRecoveryCodes(db: Db, adminId: string): Promise<number> {
  const result = await db.deleteFrom('mfa_recovery_codes').where('admin_id', '=', adminId).executeTakeFirst();
  return Number(result.numDeletedRows);
}
