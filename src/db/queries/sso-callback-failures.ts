import { sql } from 'kysely';
import type { Db } from '../database.js';

/** True when the IP has `limit` failures in the window that is still open at `now`. */
export async function isCallbackThrottled(db: Db, ip: string, now: number, window: number, limit: number): Promise<boolean> {
  const row = await db
    .selectFrom('sso_callback_failures')
    .select('failures')
    .where('ip', '=', ip)
    .where('window_start', '>', now - window)
    .executeTakeFirst();
  return row !== undefined && row.failures >= limit;
}

/** Counts one failure, starting a new window when the last one closed: one statement, so parallel failures all count. */
export async function countCallbackFailure(db: Db, ip: string, now: number, window: number): Promise<void> {
  const closed = sql<boolean>`sso_callback_failures.window_start <= ${now - window}`;
  await db
    .insertInto('sso_callback_failures')
    .values({ ip, window_start: now, failures: 1 })
    .onConflict((conflict) =>
      conflict.column('ip').doUpdateSet({
        failures: sql<number>`case when ${closed} then 1 else sso_callback_failures.failures + 1 end`,
        window_start: sql<number>`case when ${closed} then ${now} else sso_callback_failures.window_start end`,
      }),
    )
    .execute();
}
