import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { MfaFactorsTable } from '../schema/mfa-factors.js';

export type MfaFactor = Selectable<MfaFactorsTable>;

export async function insertFactor(db: Db, factor: Insertable<MfaFactorsTable>): Promise<void> {
  await db.insertInto('mfa_factors').values(factor).execute();
}

/** An admin's factors, confirmed ones only unless `withUnconfirmed`, oldest first. */
export function listFactors(db: Db, adminId: string, withUnconfirmed = false): Promise<MfaFactor[]> {
  let query = db.selectFrom('mfa_factors').selectAll().where('admin_id', '=', adminId).orderBy('created_at').orderBy('id');
  if (!withUnconfirmed) query = query.where('confirmed_at', 'is not', null);
  return query.execute();
}

export function findFactor(db: Db, adminId: string, factorId: string): Promise<MfaFactor | undefined> {
  return db.selectFrom('mfa_factors').selectAll().where('admin_id', '=', adminId).where('id', '=', factorId).executeTakeFirst();
}

/** Unconfirmed factors are left-overs of abandoned enrollments: a new one replaces them. */
export async function deleteUnconfirmedFactors(db: Db, adminId: string): Promise<void> {
  await db.deleteFrom('mfa_factors').where('admin_id', '=', adminId).where('confirmed_at', 'is', null).execute();
}

/**
 * Accepts a TOTP time step for a factor only if it is later than every step accepted before:
 * decided by this one statement, so of two requests with the same code exactly one wins.
 * Confirms the factor too, when it is not yet. Only while the admin is at `credentialEpoch`: a code
 * sent with a bearer that an operator ended meanwhile neither signs in nor confirms a factor.
 * Returns whether this caller's step was accepted.
 */
export async function claimTotpStep(db: Db, factorId: string, step: number, now: number, credentialEpoch: number): Promise<boolean> {
  const result = await db
    .updateTable('mfa_factors')
    .set((eb) => ({
      last_used_step: step,
      last_used_at: now,
      confirmed_at: eb.fn.coalesce('confirmed_at', eb.val(now)),
    }))
    .where('id', '=', factorId)
    .where((eb) => eb.or([eb('last_used_step', 'is', null), eb('last_used_step', '<', step)]))
    .where((eb) =>
      eb.exists(
        eb.selectFrom('admins').select('admins.id').whereRef('admins.id', '=', 'mfa_factors.admin_id').where('admins.credential_epoch', '=', credentialEpoch),
      ),
    )
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Removes one factor of an admin; returns whether there was one. */
export async function deleteFactor(db: Db, adminId: string, factorId: string): Promise<boolean> {
  const result = await db.deleteFrom('mfa_factors').where('admin_id', '=', adminId).where('id', '=', factorId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function deleteAllFactors(db: Db, adminId: string): Promise<number> {
  const result = await db.deleteFrom('mfa_factors').where('admin_id', '=', adminId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Confirmed factors per admin and type (for `admin list`): an enrollment in progress is not one. */
export function countConfirmedFactors(db: Db): Promise<{ admin_id: string; type: string; factors: number }[]> {
  return db
    .selectFrom('mfa_factors')
    .select(['admin_id', 'type', (eb) => eb.fn.countAll<number>().as('factors')])
    .where('confirmed_at', 'is not', null)
    .groupBy(['admin_id', 'type'])
    .orderBy('admin_id')
    .orderBy('type')
    .execute();
}
