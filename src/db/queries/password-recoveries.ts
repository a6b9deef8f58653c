import { sql } from 'kysely';
import type { Db } from '../database.js';

interface NewCode {
  readonly adminId: string;
  readonly codeHash: string;
  readonly now: number;
  readonly expiresAt: number;
}

/** Codes an admin may ask for in one window, and the window (seconds). */
interface RequestLimit {
  readonly requests: number;
  readonly window: number;
}

/**
 * Stores the admin's new recovery code, replacing any other. With `limit`, one conditional
 * upsert refuses (false) when the admin already asked for `limit.requests` codes in the window,
 * so parallel requests cannot all pass; without it (an operator's link) it always stores.
 */
export async function storeRecoveryCode(db: Db, code: NewCode, limit?: RequestLimit): Promise<boolean> {
  const expired = sql<boolean>`password_recoveries.window_start <= ${code.now - (limit?.window ?? 0)}`;
  const result = await db
    .insertInto('password_recoveries')
    .values({ admin_id: code.adminId, code_hash: code.codeHash, created_at: code.now, expires_at: code.expiresAt, requests: 1, window_start: code.now })
    .onConflict((conflict) =>
      conflict
        .column('admin_id')
        .doUpdateSet({
          code_hash: code.codeHash,
          created_at: code.now,
          expires_at: code.expiresAt,
          requests: sql<number>`(case when ${expired} then 1 else password_recoveries.requests + 1 end)`,
          window_start: sql<number>`(case when ${expired} then cast(${code.now} as bigint) else password_recoveries.window_start end)`,
        })
        .where((eb) => (limit === undefined ? eb.lit(true) : eb.or([expired, eb('password_recoveries.requests', '<', limit.requests)]))),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

/** Whether `codeHash` is the admin's live code now. */
export async function isLiveRecoveryCode(db: Db, adminId: string, codeHash: string, now: number): Promise<boolean> {
  const row = await db
    .selectFrom('password_recoveries')
    .select('admin_id')
    .where('admin_id', '=', adminId)
    .where('code_hash', '=', codeHash)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Spends the code: true for exactly one of several resets presenting it, decided by this update.
 * The row stays (expired) so that the hour's count of codes mailed still holds.
 */
export async function spendRecoveryCode(db: Db, adminId: string, codeHash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('password_recoveries')
    .set({ expires_at: 0 })
    .where('admin_id', '=', adminId)
    .where('code_hash', '=', codeHash)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Any code of the admin stops working (a new password was set another way). */
export async function deleteRecoveryCodes(db: Db, adminId: string): Promise<void> {
  await db.deleteFrom('password_recoveries').where('admin_id', '=', adminId).execute();
}

/** Turning recovery off also voids the codes already mailed to the school's admins. */
export async function setSchoolRecovery(db: Db, schoolKey: string, on: boolean): Promise<boolean> {
  const result = await db.updateTable('schools').set({ password_recovery: on ? 1 : 0 }).where('key', '=', schoolKey).executeTakeFirst();
  if (!on) {
    await db
      .deleteFrom('password_recoveries')
      .where('admin_id', 'in', (eb) => eb.selectFrom('admins').select('id').where('school_key', '=', schoolKey))
      .execute();
  }
  return Number(result.numUpdatedRows) === 1;
}
