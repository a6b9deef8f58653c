import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, UnknownRow } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setMfaPolicy } from '../../../src/auth/mfa/operator.js';
import { login } from '../../../src/auth/sign-in/login.js';
import type { AppContext } from '../../../src/auth/context.js';
import { createTestApp, seedAdmin, type TestApp } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';

/** Records the SQL text of every statement run through the Kysely instance it is plugged into. */
class StatementLog implements KyselyPlugin {
  readonly texts: string[] = [];
  constructor(private readonly deps: AppContext) {}

  transformQuery(args: PluginTransformQueryArgs) {
    this.texts.push(this.deps.db.getExecutor().compileQuery(args.node, args.queryId).sql);
    return args.node;
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }

  /** Statements that read the schools table. */
  get schoolReads(): string[] {
    return this.texts.filter((text) => /\bfrom\b[\s\S]*\bschools\b/i.test(text) && !/^\s*(insert|update|delete)\b/i.test(text));
  }
}

const CONTEXT = { ip: '203.0.113.7', userAgent: 'test' };

describe.each(TEST_DIALECTS)('a password login on %s', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({}, dialect);
  });
  afterEach(() => t.close());

  async function loginLogged(credentials: { schoolId: string; username: string; password: string }) {
    const log = new StatementLog(t.services);
    const result = await login({ ...t.services, db: t.services.db.withPlugin(log) }, credentials, CONTEXT);
    return { log, result };
  }

  it('reads the school once, with the admin, when the admin has no second factor', async () => {
    const admin = await seedAdmin(t.services);
    const { log, result } = await loginLogged(admin);
    expect(result).toHaveProperty('accessToken');
    expect(log.texts.length).toBeGreaterThan(3);
    expect(log.schoolReads).toHaveLength(1);
    expect(log.schoolReads[0]).toMatch(/\badmins\b/);
  });

  it('still answers with an enrollment challenge from that one read when the school requires a second factor', async () => {
    const admin = await seedAdmin(t.services);
    await setMfaPolicy(t.services, admin.schoolId, 'required');
    const { log, result } = await loginLogged(admin);
    expect(result).toMatchObject({ enrollment: true, methods: [] });
    expect(log.schoolReads).toHaveLength(1);
  });
});
