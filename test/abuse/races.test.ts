/**
 * Concurrent requests on one token or one account, on SQLite and PostgreSQL: the database must
 * decide every race (one successor per rotated token, no session surviving a logout, no 5xx), and
 * parallel guesses must not slip past the throttling.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { connectPostgres } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { useTestApps, postJson, seedAdmin, signIn, type TestApp } from '../helpers/app.js';
import { TEST_DIALECTS, TEST_POSTGRES_URL } from '../helpers/database.js';
import { attempt, wrong } from '../helpers/abuse-login.js';

const REFRESH = '/auth/refresh';
const LOGOUT = '/auth/logout';

describe.each(TEST_DIALECTS)('races on %s', (dialect) => {
  const open = useTestApps(dialect);

  const refresh = (t: TestApp, token: string) => postJson(t.app, REFRESH, { refresh_token: token });
  const logout = (t: TestApp, token: string) => postJson(t.app, LOGOUT, { refresh_token: token });

  async function tokenRows(t: TestApp) {
    const result = await sql<{ session_id: string; consumed_at: number | null }>`select session_id, consumed_at from refresh_tokens`.execute(t.services.db);
    return result.rows;
  }

  it('REFRESH_TOKEN_ROTATION=on: 20 parallel refreshes of one token give exactly one successor', async () => {
    const t = await open({ REFRESH_TOKEN_ROTATION: 'on' });
    const admin = await seedAdmin(t.services);
    const { refresh_token: token } = await signIn(t.app, admin);
    const answers = await Promise.all(Array.from({ length: 20 }, () => refresh(t, token)));
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(20).fill(200));
    const successors = new Set(answers.map((answer) => answer.json<{ refresh_token: string }>().refresh_token));
    expect(successors.size).toBe(1);
    const [successor] = [...successors];
    expect(successor).not.toBe(token);
    // Stored: the consumed token and one successor, nothing more.
    const rows = await tokenRows(t);
    expect(rows).toHaveLength(2);
    expect(rows.filter((row) => row.consumed_at === null)).toHaveLength(1);
    const next = await refresh(t, successor!);
    expect(next.statusCode).toBe(200);
    expect(next.json<{ refresh_token: string }>().refresh_token).not.toBe(successor);
  });

  it('REFRESH_TOKEN_ROTATION=on: parallel refreshes of a successor chain stay one chain', async () => {
    const t = await open({ REFRESH_TOKEN_ROTATION: 'on' });
    const admin = await seedAdmin(t.services);
    let token = (await signIn(t.app, admin)).refresh_token;
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(Array.from({ length: 8 }, () => refresh(t, token)));
      expect(answers.map((answer) => answer.statusCode), `round ${round}`).toEqual(Array(8).fill(200));
      const successors = new Set(answers.map((answer) => answer.json<{ refresh_token: string }>().refresh_token));
      expect(successors.size, `round ${round}`).toBe(1);
      token = [...successors][0]!;
      t.clock.advance(11);
    }
    const rows = await tokenRows(t);
    expect(rows).toHaveLength(6);
    expect(rows.filter((row) => row.consumed_at === null)).toHaveLength(1);
  });

  for (const rotation of ['on', 'off'] as const) {
    it(`REFRESH_TOKEN_ROTATION=${rotation}: a refresh racing a logout is 200 or 401, never 5xx, and the session ends`, async () => {
      const t = await open({ REFRESH_TOKEN_ROTATION: rotation });
      const admin = await seedAdmin(t.services);
      const outcomes = new Map<number, number>();
      for (let round = 0; round < 16; round++) {
        const { refresh_token: token } = await signIn(t.app, admin);
        const [refreshed, loggedOut] =
          round % 2 === 0
            ? await Promise.all([refresh(t, token), logout(t, token)])
            : await Promise.all([logout(t, token), refresh(t, token)]).then(([out, ref]) => [ref, out] as const);
        expect([200, 401], `round ${round}: ${refreshed.body}`).toContain(refreshed.statusCode);
        expect(loggedOut.statusCode).toBe(204);
        outcomes.set(refreshed.statusCode, (outcomes.get(refreshed.statusCode) ?? 0) + 1);
        expect((await refresh(t, token)).statusCode, `round ${round}: the token after logout`).toBe(401);
        if (refreshed.statusCode === 200 && rotation === 'on') {
          const successor = refreshed.json<{ refresh_token: string }>().refresh_token;
          expect((await refresh(t, successor)).statusCode, `round ${round}: the successor after logout`).toBe(401);
        }
      }
      const live = await sql<{ n: number | string }>`select count(*) as n from sessions where revoked_at is null`.execute(t.services.db);
      expect(Number(live.rows[0]!.n)).toBe(0);
      console.log(`refresh vs logout (${dialect}, rotation ${rotation}): ${JSON.stringify(Object.fromEntries(outcomes))}`);
    });
  }

  it('parallel logins with the right password from one new IP: 200 or a short 429, no 5xx, then 200 at once', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const answers = await Promise.all(Array.from({ length: 12 }, () => attempt(t.app, admin, '198.51.100.77')));
    const statuses = answers.map((answer) => answer.status);
    // An attempt counts as a failure from the moment it is let through until it succeeds, so
    // more than 5 simultaneous attempts on one account from one IP are throttled like guesses.
    expect(statuses.filter((status) => status !== 200 && status !== 429), statuses.join(',')).toEqual([]);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(5);
    expect((await attempt(t.app, admin, '198.51.100.77')).status).toBe(200);
  });

  it('parallel right and wrong passwords from many IPs: only 200 and 401, no 5xx', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) => attempt(t.app, i % 2 === 0 ? admin : wrong(admin), `198.51.100.${i % 4}`)),
    );
    // Six simultaneous attempts per (account, IP) pass the 5 free ones of layer 1 at most.
    answers.forEach((answer, i) => expect([i % 2 === 0 ? 200 : 401, 429], `attempt ${i}: ${answer.body}`).toContain(answer.status));
    expect(answers.filter((answer) => answer.status === 429).length).toBeLessThanOrEqual(4);
  });

  it('does not let parallel wrong guesses from one IP past the 5 free failures of layer 1', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => attempt(t.app, wrong(admin, `guess-${i}`), '203.0.113.66')));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status !== 401 && status !== 429), statuses.join(',')).toEqual([]);
    // Sequentially, 5 guesses are checked and the rest wait; in parallel the check must hold too.
    expect(statuses.filter((status) => status === 401).length, `password checks for 20 parallel guesses: ${statuses.join(',')}`).toBeLessThanOrEqual(5);
  });
});

/**
 * Several deployments (or test runs) sharing one PostgreSQL database in separate schemas: while
 * another schema already holds Kysely's migration tables, migrating a fresh schema must still work.
 * (Regression: before commit e2d6115 this failed with `relation "kysely_migration_lock" does not
 * exist`, and made parallel PostgreSQL test files flaky.)
 */
describe.runIf(TEST_DIALECTS.includes('postgres'))('migrations in a shared PostgreSQL database', () => {
  it('migrates a fresh schema while another schema of the database has been migrated', async () => {
    const suffix = randomBytes(4).toString('hex');
    const [other, mine] = [`abuse_other_${suffix}`, `abuse_mine_${suffix}`];
    const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await admin.connect();
    const inSchema = (schema: string) => {
      const url = new URL(TEST_POSTGRES_URL);
      url.searchParams.set('options', `-c search_path=${schema}`);
      return connectPostgres(url.toString());
    };
    try {
      await admin.query(`create schema ${other}; create schema ${mine}`);
      const first = inSchema(other);
      await migrateToLatest(first).finally(() => first.close());
      const second = inSchema(mine);
      const outcome = await migrateToLatest(second).then(
        (applied) => `applied ${applied.join(', ')}`,
        (error: unknown) => `failed: ${String(error)}`,
      );
      await second.close();
      expect(outcome).toMatch(/^applied 001-initial/);
    } finally {
      await admin.query(`drop schema if exists ${other} cascade; drop schema if exists ${mine} cascade`);
      await admin.end();
    }
  });
});
