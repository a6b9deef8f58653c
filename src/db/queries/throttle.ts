import { sql } from 'kysely';
import type { Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { ThrottleCountersTable } from '../schema/throttle-counters.js';

export type ThrottleCounter = Selectable<ThrottleCountersTable>;

export function findCounters(db: Db, keys: readonly string[]): Promise<ThrottleCounter[]> {
  return db.selectFrom('throttle_counters').selectAll().where('key', 'in', keys).execute();
}

export async function isKnownClientIp(db: Db, account: string, ip: string, since: number): Promise<boolean> {
  const row = await db
    .selectFrom('known_client_ips')
    .select('ip')
    .where('account', '=', account)
    .where('ip', '=', ip)
    .where('last_success_at', '>=', since)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Counts one failure in one scope with a single upsert: a window that has run out starts again
 * at one. Returns the consecutive count after this failure.
 */
export async function countFailure(db: Db, counter: { key: string; account: string | null; window: number }, now: number): Promise<number> {
  const expired = sql<boolean>`throttle_counters.window_start <= ${now - counter.window}`;
  const row = await db
    .insertInto('throttle_counters')
    .values({ key: counter.key, account: counter.account, window_start: now, failures: 1, last_failure_at: now, consecutive: 1 })
    .onConflict((conflict) =>
      conflict.column('key').doUpdateSet({
        failures: sql<number>`case when ${expired} then 1 else throttle_counters.failures + 1 end`,
        window_start: sql<number>`case when ${expired} then ${now} else throttle_counters.window_start end`,
        last_failure_at: now,
        consecutive: sql<number>`throttle_counters.consecutive + 1`,
      }),
    )
    .returning('consecutive')
    .executeTakeFirstOrThrow();
  return row.consecutive;
}

export async function deleteCounters(db: Db, keys: readonly string[]): Promise<void> {
  await db.deleteFrom('throttle_counters').where('key', 'in', keys).execute();
}

/** Clears every counter of an account: unlock, or a new password. */
export async function deleteAccountCounters(db: Db, account: string): Promise<number> {
  const result = await db.deleteFrom('throttle_counters').where('account', '=', account).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function rememberClientIp(db: Db, account: string, ip: string, now: number): Promise<void> {
  await db
    .insertInto('known_client_ips')
    .values({ account, ip, last_success_at: now })
    .onConflict((conflict) => conflict.columns(['account', 'ip']).doUpdateSet({ last_success_at: now }))
    .execute();
}
