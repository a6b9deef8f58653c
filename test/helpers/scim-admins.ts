import type { KyselyPlugin, OperationNode, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { buildApp } from '../../src/app.js';
import { canonicalKey } from '../../src/auth/identity.js';
import { SSO_ONLY_PASSWORD_HASH } from '../../src/auth/sso/links.js';
import type { Db, Dialect } from '../../src/db/database.js';
import { closeServices, openServices } from '../../src/services.js';
import { testConfig, type TestApp } from './app.js';
import { TestClock } from './clock.js';
import { createTestDatabase } from './database.js';

/** Every statement a Kysely instance built with this plugin runs, as its operation tree. */
export class StatementRecorder implements KyselyPlugin {
  readonly statements: RootOperationNode[] = [];

  transformQuery(args: { node: RootOperationNode }): RootOperationNode {
    this.statements.push(args.node);
    return args.node;
  }

  transformResult(args: { result: QueryResult<UnknownRow> }): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }

  /** How many statements `work` ran. */
  async count(work: () => Promise<unknown>): Promise<number> {
    const before = this.statements.length;
    await work();
    return this.statements.length - before;
  }

  /** The statements `work` ran, compiled by `db` to the SQL and parameters the driver receives. */
  async compiled(db: Db, work: () => Promise<unknown>): Promise<{ sql: string; parameters: readonly unknown[] }[]> {
    const before = this.statements.length;
    await work();
    return this.statements.slice(before).map((node: OperationNode) => {
      const query = db.getExecutor().compileQuery(node as RootOperationNode, { queryId: `recorded-${before}` });
      return { sql: query.sql, parameters: query.parameters };
    });
  }
}

/**
 * The real application on a fresh migrated database of `dialect`, as createTestApp builds it, but
 * with every statement of the service passing through `recorder` (to count what a request runs).
 */
export async function createRecordedApp(dialect: Dialect, recorder: StatementRecorder): Promise<TestApp> {
  const config = testConfig();
  const raw = await createTestDatabase(dialect);
  const database = { ...raw, db: raw.db.withPlugin(recorder) };
  const clock = new TestClock();
  const services = await openServices(config, { clock, database });
  const app = await buildApp(services);
  return {
    app,
    services,
    clock,
    config,
    close: async () => {
      await app.close();
      await closeServices(services);
    },
  };
}

/** The username, directory id and address of the `i`th bulk admin. */
export const bulkAdmin = (i: number) => ({ username: `staff${i}@district.example`, externalId: `ext-${i}`, email: `Staff${i}@district.example` });

/**
 * `count` admins of school `schoolId` (which must exist), inserted straight into the tables in
 * chunks (fast on both dialects), each with a directory id and one address: what a large sync
 * leaves behind. Returns their ids in creation order.
 */
export async function insertAdmins(db: Db, schoolId: string, count: number, createdAt = 1_767_600_000): Promise<string[]> {
  const schoolKey = canonicalKey(schoolId);
  const ids: string[] = [];
  const CHUNK = 1000;
  for (let start = 0; start < count; start += CHUNK) {
    const chunk = Array.from({ length: Math.min(CHUNK, count - start) }, (_, offset) => start + offset);
    const admins = chunk.map((i) => {
      const { username, externalId } = bulkAdmin(i);
      return {
        id: `bulk-${String(i).padStart(6, '0')}`,
        school_key: schoolKey,
        username_key: canonicalKey(username),
        username,
        external_id: externalId,
        password_hash: SSO_ONLY_PASSWORD_HASH,
        disabled_at: null,
        created_at: createdAt + i,
        password_changed_at: createdAt + i,
      };
    });
    await db.insertInto('admins').values(admins).execute();
    const emails = chunk.map((i, index) => ({ admin_id: admins[index]?.id ?? '', address: bulkAdmin(i).email, source: 'scim', added_at: createdAt + i }));
    await db.insertInto('admin_emails').values(emails).execute();
    ids.push(...admins.map((admin) => admin.id));
  }
  return ids;
}
