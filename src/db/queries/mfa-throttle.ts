import { sql } from 'kysely';
import { inTransaction, type Db } from '../database.js';

export interface MfaThrottleRules {
  /** Failures allowed per window. */
  readonly maxFailures: number;
  /** Window length, in seconds. */
  readonly window: number;
  /** Consecutive failures that lock the scope until an operator lifts it; undefined for never. */
  readonly lockAfter?: number;
}

export interface MfaAttempt {
  readonly failures: number;
  readonly consecutive: number;
  readonly locked: boolean;
}

/**
 * Counts a second-factor attempt as a failure in one scope of an admin before its code is checked
 * (a right code gives it back with {@link releaseMfaAttempts}), in one conditional statement:
 * parallel wrong codes cannot go past the limits. The failure that reaches `lockAfter` locks.
 * Undefined when the scope refuses the attempt.
 */
export function reserveMfaAttempt(db: Db, adminId: string, scope: string, rules: MfaThrottleRules, now: number): Promise<MfaAttempt | undefined> {
  // Parameters are cast: PostgreSQL cannot infer a type for a bare parameter inside CASE.
  const at = sql<number>`cast(${now} as bigint)`;
  // A window starts at the first failure: one that is over, or one holding no failure (every
  // attempt in it proved right), gives way to a new window starting now.
  const windowOver = sql<boolean>`(window_start <= cast(${now - rules.window} as bigint) or failures = 0)`;
  const locks = rules.lockAfter === undefined ? sql<number | null>`null` : sql<number | null>`case when consecutive + 1 >= ${rules.lockAfter} then ${at} else null end`;
  return inTransaction(db, async (trx) => {
    await trx
      .insertInto('mfa_throttle')
      .values({ admin_id: adminId, scope, window_start: now, failures: 0, consecutive: 0, locked_at: null })
      .onConflict((conflict) => conflict.columns(['admin_id', 'scope']).doNothing())
      .execute();
    const row = await trx
      .updateTable('mfa_throttle')
      .set({
        failures: sql<number>`case when ${windowOver} then 1 else failures + 1 end`,
        window_start: sql<number>`case when ${windowOver} then ${at} else window_start end`,
        consecutive: sql<number>`consecutive + 1`,
        locked_at: locks,
      })
      .where('admin_id', '=', adminId)
      .where('scope', '=', scope)
      .where('locked_at', 'is', null)
      .where(sql<boolean>`(${windowOver} or failures < ${rules.maxFailures})`)
      .returning(['failures', 'consecutive', 'locked_at'])
      .executeTakeFirst();
    return row === undefined ? undefined : { failures: row.failures, consecutive: row.consecutive, locked: row.locked_at !== null };
  });
}

/** A right code: each reserved failure is given back and the consecutive counts start over. */
export async function releaseMfaAttempts(db: Db, adminId: string, scopes: readonly string[]): Promise<void> {
  await db
    .updateTable('mfa_throttle')
    .set({ failures: sql<number>`case when failures > 0 then failures - 1 else 0 end`, consecutive: 0 })
    .where('admin_id', '=', adminId)
    .where('scope', 'in', scopes)
    .where('locked_at', 'is', null)
    .execute();
}

export function findMfaThrottle(db: Db, adminId: string, scope: string) {
  return db.selectFrom('mfa_throttle').selectAll().where('admin_id', '=', adminId).where('scope', '=', scope).executeTakeFirst();
}

/** Whether any scope of the admin is locked. */
export async function isMfaLocked(db: Db, adminId: string): Promise<boolean> {
  const row = await db.selectFrom('mfa_throttle').select('scope').where('admin_id', '=', adminId).where('locked_at', 'is not', null).executeTakeFirst();
  return row !== undefined;
}

/** Lifts every wait and lock of an admin's second factor; returns how many scopes held one. */
export async function deleteMfaThrottle(db: Db, adminId: string): Promise<number> {
  const result = await db.deleteFrom('mfa_throttle').where('admin_id', '=', adminId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Per-address counters whose window is over: they can refuse nothing more and lock nothing (only
 * the scope of new addresses locks, and its consecutive count is kept). Returns how many went.
 */
export async function deleteStaleMfaThrottle(db: Db, windowStartedBefore: number, keptScope: string): Promise<number> {
  const result = await db
    .deleteFrom('mfa_throttle')
    .where('scope', '<>', keptScope)
    .where('window_start', '<=', windowStartedBefore)
    .where('locked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
