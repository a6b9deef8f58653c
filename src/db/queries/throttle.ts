import { sql, type RawBuilder } from 'kysely';
import type { Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { ThrottleCountersTable } from '../schema/throttle-counters.js';

type ThrottleCounter = Selectable<ThrottleCountersTable>;

/** How long a scope blocks after an attempt, given its counts: policy decided in auth/, as values. */
interface Backoff {
  /** The count the waits are indexed by: windowed failures, or the larger of those and the consecutive ones. */
  readonly count: 'failures' | 'failures-or-consecutive';
  /** `waits[n]` seconds after the n-th failure, the last entry for every larger n; 0 blocks nothing. */
  readonly waits: readonly number[];
  /** Whether a wait runs from this attempt or from the start of the scope's window. */
  readonly from: 'now' | 'window-start';
}

/** One throttling scope. */
export interface CounterRule {
  readonly key: string;
  readonly account: string | null;
  /** Seconds after its start that a window of failures is forgotten. */
  readonly window: number;
  /** Whether this attempt must respect the counter's block (a known IP skips the account's). */
  readonly enforce: boolean;
  /** Refuse once `consecutive` reaches this (the account lockout); undefined for none. */
  readonly lockout?: number;
  readonly backoff: Backoff;
}

interface Counts {
  readonly failures: RawBuilder<number>;
  readonly consecutive: RawBuilder<number>;
  readonly windowStart: RawBuilder<number>;
}

/** `blocked_until` after this attempt, as one SQL expression so it is decided atomically. */
function blockedUntilSql(backoff: Backoff, counts: Counts, now: number): RawBuilder<number> {
  const n =
    backoff.count === 'failures'
      ? counts.failures
      : sql<number>`(case when ${counts.failures} > ${counts.consecutive} then ${counts.failures} else ${counts.consecutive} end)`;
  // Cast: PostgreSQL cannot type `$1 + 5` on its own.
  const from = backoff.from === 'now' ? sql<number>`cast(${now} as bigint)` : counts.windowStart;
  const until = (wait: number) => (wait === 0 ? sql`0` : sql`${from} + ${sql.lit(wait)}`);
  // One branch per run of equal waits: the ladder stays short however long the policy.
  const branches: RawBuilder<unknown>[] = [];
  backoff.waits.forEach((wait, index) => {
    const next = backoff.waits[index + 1];
    if (next === undefined || next === wait) return;
    branches.push(sql`when ${n} <= ${sql.lit(index)} then ${until(wait)}`);
  });
  const last = until(backoff.waits.at(-1) ?? 0);
  if (branches.length === 0) return sql<number>`${last}`;
  return sql<number>`(case ${sql.join(branches, sql` `)} else ${last} end)`;
}

/**
 * Counts an attempt in one scope, unless the scope refuses it: a single upsert whose condition
 * is the throttle check, so parallel attempts cannot all pass a check made before any of them
 * was counted. Returns the counts after this attempt, or undefined when the attempt is refused.
 */
export async function reserveAttempt(db: Db, rule: CounterRule, now: number): Promise<{ consecutive: number } | undefined> {
  const expired = sql<boolean>`throttle_counters.window_start <= ${now - rule.window}`;
  const failures = sql<number>`(case when ${expired} then 1 else throttle_counters.failures + 1 end)`;
  const windowStart = sql<number>`(case when ${expired} then ${now} else throttle_counters.window_start end)`;
  const consecutive = sql<number>`(throttle_counters.consecutive + 1)`;
  const first: Counts = { failures: sql<number>`1`, consecutive: sql<number>`1`, windowStart: sql<number>`cast(${now} as bigint)` };
  const row = await db
    .insertInto('throttle_counters')
    .values({
      key: rule.key,
      account: rule.account,
      window_start: now,
      failures: 1,
      last_failure_at: now,
      consecutive: 1,
      blocked_until: blockedUntilSql(rule.backoff, first, now),
      refused: 0,
    })
    .onConflict((conflict) =>
      conflict
        .column('key')
        .doUpdateSet({
          failures,
          window_start: windowStart,
          last_failure_at: now,
          consecutive,
          blocked_until: blockedUntilSql(rule.backoff, { failures, consecutive, windowStart }, now),
          refused: 0,
        })
        .where((eb) => {
          const conditions = [];
          if (rule.enforce) conditions.push(eb('throttle_counters.blocked_until', '<=', now));
          if (rule.lockout !== undefined) conditions.push(eb('throttle_counters.consecutive', '<', rule.lockout));
          return eb.and(conditions);
        }),
    )
    .returning('consecutive')
    .executeTakeFirst();
  return row;
}

/** Counts a refused attempt on the counter that blocked it; returns the refusals of this block so far. */
export async function countRefusal(db: Db, key: string): Promise<number> {
  const row = await db
    .updateTable('throttle_counters')
    .set({ refused: sql<number>`refused + 1` })
    .where('key', '=', key)
    .returning('refused')
    .executeTakeFirst();
  return row?.refused ?? 0;
}

export function findCounters(db: Db, keys: readonly string[]): Promise<ThrottleCounter[]> {
  return db.selectFrom('throttle_counters').selectAll().where('key', 'in', keys).execute();
}

/**
 * Gives back an attempt that was counted when it was let through but was no failure (a success in
 * a shared scope, or a request that could not be checked); lifts the block if it drops below.
 */
export async function releaseAttempt(db: Db, key: string, limit: number): Promise<void> {
  await db
    .updateTable('throttle_counters')
    .set({
      failures: sql<number>`failures - 1`,
      consecutive: sql<number>`case when consecutive > 0 then consecutive - 1 else 0 end`,
      blocked_until: sql<number>`case when failures - 1 >= ${limit} then blocked_until else 0 end`,
    })
    .where('key', '=', key)
    .where('failures', '>', 0)
    .execute();
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

export async function deleteCounters(db: Db, keys: readonly string[]): Promise<void> {
  await db.deleteFrom('throttle_counters').where('key', 'in', keys).execute();
}

/** Clears every counter of an account: unlock, or a new password. */
export async function deleteAccountCounters(db: Db, account: string): Promise<number> {
  const result = await db.deleteFrom('throttle_counters').where('account', '=', account).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Remembers a successful sign-in from `ip`. True when the address is new to the account and the
 * account had signed in from another before (a first sign-in ever tells nothing): the insert
 * decides, so of two parallel sign-ins from one new address exactly one reports it.
 */
export async function rememberClientIp(db: Db, account: string, ip: string, now: number): Promise<boolean> {
  const inserted = await db
    .insertInto('known_client_ips')
    .values({ account, ip, last_success_at: now })
    .onConflict((conflict) => conflict.columns(['account', 'ip']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) {
    await db.updateTable('known_client_ips').set({ last_success_at: now }).where('account', '=', account).where('ip', '=', ip).execute();
    return false;
  }
  const other = await db.selectFrom('known_client_ips').select('ip').where('account', '=', account).where('ip', '!=', ip).limit(1).executeTakeFirst();
  return other !== undefined;
}
