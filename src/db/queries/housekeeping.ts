import type { Db } from '../database.js';

/** Deletes sessions that ended before `cutoff`, with their refresh tokens, in one transaction. */
export async function deleteEndedSessions(db: Db, cutoff: number, idleTimeout: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const ended = trx
      .selectFrom('sessions')
      .select('id')
      .where((eb) =>
        eb.or([eb('revoked_at', '<', cutoff), eb('expires_at', '<', cutoff), eb('last_used_at', '<', cutoff - idleTimeout)]),
      );
    await trx.deleteFrom('refresh_tokens').where('session_id', 'in', ended).execute();
    const result = await trx
      .deleteFrom('sessions')
      .where((eb) =>
        eb.or([eb('revoked_at', '<', cutoff), eb('expires_at', '<', cutoff), eb('last_used_at', '<', cutoff - idleTimeout)]),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  });
}

/** Deletes throttle counters idle since `cutoff`, except lockouts, which only an unlock lifts. */
export async function deleteStaleCounters(db: Db, cutoff: number, lockoutFailures: number): Promise<number> {
  const result = await db
    .deleteFrom('throttle_counters')
    .where('last_failure_at', '<', cutoff)
    .where('consecutive', '<', lockoutFailures)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function deleteStaleClientIps(db: Db, cutoff: number): Promise<number> {
  const result = await db.deleteFrom('known_client_ips').where('last_success_at', '<', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}
