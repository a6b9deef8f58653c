import { createHash } from 'node:crypto';
import { sql, type Kysely, type Migration } from 'kysely';

/** The stored account digest of auth/throttle-rules.ts, frozen here as this migration wrote it. */
function accountDigest(schoolKey: string, usernameKey: string): string {
  return createHash('sha256').update(JSON.stringify(['account', schoolKey, usernameKey])).digest('base64url');
}

/**
 * Throttling state is keyed by fixed-size digests (what an unauthenticated client typed can be
 * 18 times longer once normalized), and throttled attempts are counted on the counter that
 * refused them instead of each writing an audit event. Known client IPs are re-keyed, so no admin
 * loses the exemption of an address they signed in from; failure counters, which only hold the
 * last minutes of failures, are dropped (a lockout among them is lifted).
 */
export const throttleRefusals: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('throttle_counters').addColumn('refused', 'integer', (col) => col.notNull().defaultTo(0)).execute();
    await sql`delete from throttle_counters`.execute(db);
    const { rows } = await sql<{ account: string; ip: string }>`select account, ip from known_client_ips`.execute(db);
    for (const row of rows) {
      const [schoolKey, usernameKey] = JSON.parse(row.account) as [string, string];
      await sql`update known_client_ips set account = ${accountDigest(schoolKey, usernameKey)} where account = ${row.account} and ip = ${row.ip}`.execute(db);
    }
  },
};
