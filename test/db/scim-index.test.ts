/**
 * The queries a SCIM list runs for the filters a directory sends on every sync (`userName eq`,
 * `externalId eq`, `emails.value eq`) are answered from an index, not by reading every admin of
 * the school: checked on the plans of the very statements `listUsers` compiles, with 10,000
 * admins in one school (so the school alone narrows nothing).
 */
import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listUsers } from '../../src/auth/scim/user-read.js';
import type { Database, Db, Dialect } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestDatabase, schoolRow, TEST_DIALECTS } from '../helpers/database.js';
import { bulkAdmin, insertAdmins, StatementRecorder } from '../helpers/scim-admins.js';

const ADMINS = 10_000;
const SCHOOL = 'lincoln-high';
const CLIENT = { tokenId: 'token', schoolKey: SCHOOL, schoolId: SCHOOL };
const BASE = 'https://auth.school.example/scim/v2';

/** The plan of one compiled statement, one line per node. */
async function planOf(db: Db, dialect: Dialect, statement: { sql: string; parameters: readonly unknown[] }): Promise<string> {
  if (dialect === 'sqlite') {
    const result = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${statement.sql}`, [...statement.parameters]));
    return result.rows.map((row) => row.detail).join('\n');
  }
  const result = await db.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`EXPLAIN ${statement.sql}`, [...statement.parameters]));
  return result.rows.map((row) => row['QUERY PLAN']).join('\n');
}

/** What a table's rows were reached by, in each dialect's words. */
const INDEXED = {
  sqlite: (table: string, how: string) => new RegExp(`SEARCH ${table} USING (COVERING )?INDEX \\S+ \\(${how}\\)`),
  postgres: (table: string, index: string) => new RegExp(`(Index Scan|Index Only Scan) using ${index} on ${table}|Bitmap Index Scan on ${index}`),
} as const;

const FULL_SCAN = {
  sqlite: /\bSCAN (TABLE )?(admins|admin_emails)\b/,
  postgres: /Seq Scan on (admins|admin_emails)\b/,
} as const;

describe.each(TEST_DIALECTS)('the SCIM list filters on %s, with 10,000 admins in one school', (dialect) => {
  let database: Database;
  const recorder = new StatementRecorder();
  let recorded: Db;

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    await migrateToLatest(database);
    await database.db.insertInto('schools').values(schoolRow(SCHOOL)).execute();
    await insertAdmins(database.db, SCHOOL, ADMINS);
    // Statistics as autovacuum would have them after a sync this size.
    await sql`analyze`.execute(database.db);
    recorded = database.db.withPlugin(recorder);
  }, 120_000);
  afterAll(() => database.close());

  /** Runs the list for `filter` as GET /Users does; its one match, and every statement it ran with its plan. */
  async function list(filter: string) {
    let page: Record<string, unknown> = {};
    const statements = await recorder.compiled(database.db, async () => {
      page = await listUsers({ db: recorded }, CLIENT, { filter }, BASE);
    });
    const plans = await Promise.all(statements.map((statement) => planOf(database.db, dialect, statement)));
    return { page, statements, plans };
  }

  const target = bulkAdmin(7_321);

  const cases = [
    { filter: `userName eq "${target.username.toUpperCase()}"`, sqlite: 'school_key=\\? AND username_key=\\?', postgres: 'admins_school_username', table: 'admins' },
    { filter: `externalId eq "${target.externalId}"`, sqlite: 'school_key=\\? AND external_id=\\?', postgres: 'admins_school_external_id', table: 'admins' },
    { filter: `emails.value eq "${target.email.toUpperCase()}"`, sqlite: '<expr>=\\?', postgres: 'admin_emails_address', table: 'admin_emails' },
    { filter: `emails[value eq "${target.email}"]`, sqlite: '<expr>=\\?', postgres: 'admin_emails_address', table: 'admin_emails' },
  ] as const;

  it.each(cases)('$filter: found by $table index, and no statement reads the whole table', async ({ filter, table, ...expected }) => {
    const { page, statements, plans } = await list(filter);
    expect(page).toMatchObject({ totalResults: 1, itemsPerPage: 1, Resources: [{ userName: target.username, externalId: target.externalId }] });
    // The count, the page, and the page's addresses.
    expect(statements).toHaveLength(3);
    const [count, rows] = plans;
    for (const plan of [count, rows]) {
      const how = dialect === 'sqlite' ? expected.sqlite : expected.postgres;
      expect(plan, plan).toMatch(INDEXED[dialect](table, how));
    }
    for (const plan of plans) expect(plan, plan).not.toMatch(FULL_SCAN[dialect]);
  });

  it('the plans are those of the statements that ran: a filter on an unindexed column matches none of the index shapes', async () => {
    // meta.created has no index: if its plan looked like the ones above, the test above could not fail.
    const { page, plans } = await list('meta.created gt "2026-01-05T00:00:00Z"');
    expect(page).toMatchObject({ totalResults: ADMINS, itemsPerPage: 200 });
    for (const { table, ...expected } of cases) expect(plans[0]).not.toMatch(INDEXED[dialect](table, expected[dialect]));
  });
});
