/**
 * What unauthenticated login attempts make us store is bounded per request (docs/design.md): the
 * largest names the contract accepts, which NFKC can grow 18-fold (U+FDFA), end up as
 * fixed-size throttle keys and bounded audit text; throttled attempts add no rows at all.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { useTestApps, seedAdmin, type TestApp } from '../helpers/app.js';
import { TEST_DIALECTS } from '../helpers/database.js';
import { attempt, ipFor } from '../helpers/abuse-login.js';

/** The worst a client can send within the contract's length limits. */
const HUGE = { schoolId: '\uFDFA'.repeat(128), username: '\uFDFA'.repeat(256), password: 'p'.repeat(1024) };
const TABLES = ['throttle_counters', 'known_client_ips', 'events', 'sessions', 'refresh_tokens'] as const;

async function rowCounts(t: TestApp): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of TABLES) {
    const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(t.services.db);
    counts[table] = Number(rows[0]?.n);
  }
  return counts;
}

/** Bytes of the SQLite file once the WAL is folded in. */
async function sqliteBytes(t: TestApp): Promise<number> {
  await sql`pragma wal_checkpoint(TRUNCATE)`.execute(t.services.db);
  const pages = await sql<{ page_count: number }>`pragma page_count`.execute(t.services.db);
  const size = await sql<{ page_size: number }>`pragma page_size`.execute(t.services.db);
  return Number(pages.rows[0]?.page_count) * Number(size.rows[0]?.page_size);
}

describe.each(TEST_DIALECTS)('writes of unauthenticated logins on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('a failed login stores fixed-size throttle keys and bounded audit text', async () => {
    const t = await open();
    await seedAdmin(t.services);
    expect((await attempt(t.app, HUGE, '203.0.113.1')).status).toBe(401);
    const counters = await t.services.db.selectFrom('throttle_counters').select(['key', 'account']).execute();
    expect(counters).toHaveLength(3);
    for (const row of counters) {
      expect(row.key.length).toBeLessThanOrEqual(64);
      expect((row.account ?? '').length).toBeLessThanOrEqual(64);
    }
    const events = await t.services.db.selectFrom('events').select(['school_id', 'username']).where('type', '=', 'login.failure').execute();
    expect(events).toHaveLength(1);
    // At most the contract's limits, plus the mark of a cut.
    expect([...(events[0]?.username ?? '')].length).toBeLessThanOrEqual(257);
    expect([...(events[0]?.school_id ?? '')].length).toBeLessThanOrEqual(129);
  });

  it('throttled attempts add no rows: refusals are counted, one event per block', async () => {
    const t = await open();
    await seedAdmin(t.services);
    const ip = '203.0.113.2';
    for (let i = 0; i < 5; i++) expect((await attempt(t.app, HUGE, ip)).status).toBe(401);
    expect((await attempt(t.app, HUGE, ip)).status).toBe(429);
    const before = await rowCounts(t);
    for (let i = 0; i < 50; i++) expect((await attempt(t.app, HUGE, ip)).status).toBe(429);
    expect(await rowCounts(t)).toEqual(before);
  });

});

describe('database growth from unauthenticated logins on sqlite', () => {
  const open = useTestApps('sqlite');

  it('measures the most a failed or a throttled login adds to the database file', async () => {
    const t = await open();
    await seedAdmin(t.services);
    // Each failure costs a full argon2id verification at the smallest parameters the service
    // allows, so their number is kept to what measures a page-granular growth (4 KiB pages).
    const failures = 50;
    const throttled = 200;
    const start = await sqliteBytes(t);
    // Each for a new account from a new address: three new counters and one event per attempt, the worst case.
    for (let i = 0; i < failures; i++) {
      const creds = { ...HUGE, username: `${i}${HUGE.username}`.slice(0, 256) };
      expect((await attempt(t.app, creds, ipFor(i, '10.77'))).status).toBe(401);
    }
    const afterFailures = await sqliteBytes(t);
    const perFailure = (afterFailures - start) / failures;
    for (let i = 0; i < 5; i++) await attempt(t.app, HUGE, '10.78.0.1');
    const blocked = await sqliteBytes(t);
    for (let i = 0; i < throttled; i++) expect((await attempt(t.app, HUGE, '10.78.0.1')).status).toBe(429);
    const perThrottled = ((await sqliteBytes(t)) - blocked) / throttled;
    console.log(`database growth: ${perFailure.toFixed(0)} bytes per failed login, ${perThrottled.toFixed(0)} per throttled login`);
    expect(perFailure).toBeLessThan(6 * 1024);
    expect(perThrottled).toBe(0);
  });
});
