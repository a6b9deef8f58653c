/** `school-auth admin delete [--erase]`, `admin export`, `events` after an erasure, and `prune`'s retention settings, on each dialect. */
import { describe, expect } from 'vitest';
import { buildApp } from '../../src/app.js';
import { addAdmin } from '../../src/auth/accounts/admins.js';
import { addSchool } from '../../src/auth/accounts/schools.js';
import { connect } from '../../src/db/connect.js';
import { closeServices, openServices } from '../../src/services.js';
import { testConfig, type TestApp } from '../helpers/app.js';
import { sealAll } from '../helpers/audit.js';
import type { InProcessApp } from '../helpers/cli-app.js';
import { cliTest as test, ok, parseJson, SLOW, type Workspace } from '../helpers/cli-workspace.js';
import { TestClock } from '../helpers/clock.js';
import { createPostgresDatabase, TEST_DIALECTS } from '../helpers/database.js';
import { enrollTotp } from '../helpers/mfa.js';
import { entraUser, scimClient, scimSchool } from '../helpers/scim.js';

const PASSWORD = 'correct horse battery staple';
const SCHOOL = ['--school', 'lincoln-high'] as const;
const ALICE = [...SCHOOL, '--username', 'alice'] as const;
const CLIENT = { ip: '203.0.113.77', userAgent: 'AliceBrowser/7.7' };
const DAY = 86_400;

interface ListedEvent {
  type: string;
  username: string | null;
  ip: string | null;
  admin_id: string | null;
  erased: boolean;
}

/** `deleted N sessions, ... M events, ...`: N and M. */
function pruned(stdout: string): { sessions: number; events: number } {
  const found = /^deleted (\d+) sessions, .*, (\d+) events, /m.exec(stdout);
  if (found === null) throw new Error(`no counts in: ${stdout}`);
  return { sessions: Number(found[1]), events: Number(found[2]) };
}

describe.each(TEST_DIALECTS)('school-auth admin delete, admin export and retention on %s', (dialect) => {
  /** `body` with an in-process app on this dialect's database (PostgreSQL: a database of its own, dropped after). */
  async function withDatabase(
    ws: Workspace,
    body: (app: InProcessApp, run: (args: readonly string[], extra?: Record<string, string>) => ReturnType<Workspace['run']>, env: Record<string, string>) => Promise<void>,
    before?: (env: Record<string, string>) => Promise<void>,
  ) {
    const database = dialect === 'postgres' ? await createPostgresDatabase() : undefined;
    const env: Record<string, string> = database === undefined ? {} : { DATABASE_URL: database.url, ISSUER: 'https://auth.test' };
    try {
      await before?.(env);
      const app = await ws.openApp(env);
      try {
        if (before === undefined) await app.seedSchool('lincoln-high');
        await body(app, (args, extra = {}) => ws.run(args, { env: { ...env, ...extra } }), env);
      } finally {
        await app.close();
      }
    } finally {
      await database?.drop();
    }
  }

  /** The id of the account that signs in as `username` now. */
  const adminId = async (app: InProcessApp, username: string) => (await app.services.db.selectFrom('admins').select('id').where('username_key', '=', username).executeTakeFirstOrThrow()).id;

  test('admin delete ends every session of a signed-in admin (refresh, /admin/auth/me, the revocation feed) and frees the username', SLOW, async ({ ws }) => {
    await withDatabase(ws, async (app, run, env) => {
      await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
      const tokens = await app.signIn({ school_id: 'lincoln-high', username: 'alice', password: PASSWORD }, CLIENT);
      expect((await app.me(tokens.access_token)).statusCode).toBe(200);
      const id = await adminId(app, 'alice');
      const sessions = await app.services.db.selectFrom('sessions').select('id').where('admin_id', '=', id).execute();
      expect(sessions).toHaveLength(1);

      expect(ok(await run(['admin', 'delete', ...ALICE])).stdout).toBe('admin "alice" deleted\n');
      expect((await app.refresh(tokens.refresh_token)).statusCode).toBe(401);
      expect((await app.me(tokens.access_token)).statusCode).toBe(401);
      const feed = await app.app.inject({ method: 'GET', url: '/auth/revocations' });
      expect(feed.json<{ sids: string[] }>().sids).toEqual([sessions[0]?.id]);
      // Deleted, not erased: the trail still names them.
      const listed = parseJson<ListedEvent[]>(ok(await run(['events', '--json', '--type', 'admin.deleted'])));
      expect(listed).toMatchObject([{ username: 'alice', admin_id: id, erased: false }]);

      ok(await ws.run(['admin', 'add', ...ALICE, '--password-stdin'], { env, input: 'a new passphrase for alice' }));
      const again = await app.signIn({ school_id: 'lincoln-high', username: 'alice', password: 'a new passphrase for alice' });
      expect((await app.me(again.access_token)).statusCode).toBe(200);
      expect(await adminId(app, 'alice')).not.toBe(id);
      expect((await app.me(tokens.access_token)).statusCode).toBe(401);
    });
  });

  test('admin delete --erase erases an admin deleted before, by admin delete or by SCIM; events shows (erased); both refuse an unknown admin', SLOW, async ({ ws }) => {
    await withDatabase(ws, async (app, run) => {
      await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
      await app.signIn({ school_id: 'lincoln-high', username: 'alice', password: PASSWORD }, CLIENT);
      const alice = await adminId(app, 'alice');
      const scim = scimClient(app.app, (await scimSchool(app.services)).token);
      const created = await scim.post('/Users', entraUser('bob@lincoln-high.example'));
      expect(created.statusCode).toBe(201);
      const bob = created.json<{ id: string }>().id;
      expect((await scim.delete(`/Users/${bob}`)).statusCode).toBe(204);
      ok(await run(['admin', 'delete', ...ALICE]));

      const twice = await run(['admin', 'delete', ...ALICE]);
      expect(twice).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: admin "alice" is already deleted; erase their data with --erase\n' });
      expect(ok(await run(['admin', 'delete', ...ALICE, '--erase'])).stdout).toBe('admin "alice" deleted and their personal data erased\n');
      expect(ok(await run(['admin', 'delete', ...SCHOOL, '--username', 'bob@lincoln-high.example', '--erase'])).stdout).toBe(
        'admin "bob@lincoln-high.example" deleted and their personal data erased\n',
      );

      const listed = parseJson<ListedEvent[]>(ok(await run(['events', '--json', '--limit', '1000'])));
      const about = (id: string) => listed.filter((event) => event.admin_id === id && event.type !== 'admin.erased');
      expect(about(alice).map((event) => event.type)).toEqual(expect.arrayContaining(['admin.created', 'login.success', 'admin.deleted']));
      expect(about(bob).map((event) => event.type)).toEqual(expect.arrayContaining(['admin.created', 'admin.deleted']));
      for (const event of [...about(alice), ...about(bob)]) expect(event).toMatchObject({ username: null, ip: null, erased: true });
      expect(listed.filter((event) => event.type === 'admin.erased').map((event) => event.admin_id).sort()).toEqual([alice, bob].sort());
      const table = ok(await run(['events', '--limit', '1000'])).stdout;
      expect(table).toMatch(/^\S+\s+lincoln-high\s+\(erased\)\s+signed in\b/m);
      expect(table).not.toContain(CLIENT.ip);
      expect(table).not.toMatch(/alice|bob@/);
      expect(ok(await run(['events', 'verify'])).stdout).toMatch(/^ok: \d+ sealed events and \d+ checkpoints? checked\n$/);

      // Gone for good: neither deleting nor erasing finds them again, nor anyone unknown.
      for (const args of [ALICE, [...ALICE, '--erase'], [...SCHOOL, '--username', 'nobody'], [...SCHOOL, '--username', 'nobody', '--erase']]) {
        const refused = await run(['admin', 'delete', ...args]);
        const name = args[3] ?? '';
        expect(refused).toMatchObject({ code: 1, stdout: '', stderr: `school-auth: admin "${name}" does not exist in school "lincoln-high" (nor was deleted without erasure)\n` });
      }
      const otherSchool = await run(['admin', 'delete', '--school', 'nowhere-high', '--username', 'alice', '--erase']);
      expect(otherSchool.code).toBe(1);
      expect(otherSchool.stderr).toMatch(/^school-auth: .*nowhere-high/);
    });
  });

  test('admin export prints the account, addresses, factors, sessions and events as JSON, and never a secret', SLOW, async ({ ws }) => {
    await withDatabase(ws, async (app, run) => {
      await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
      ok(await run(['admin', 'email', 'set', ...ALICE, '--email', 'alice@lincoln-high.example']));
      const session = await app.signIn({ school_id: 'lincoln-high', username: 'alice', password: PASSWORD }, CLIENT);
      const totp = await enrollTotp(app as unknown as TestApp, session.access_token);
      const id = await adminId(app, 'alice');
      const { db } = app.services;
      const stored = {
        passwordHash: (await db.selectFrom('admins').select('password_hash').where('id', '=', id).executeTakeFirstOrThrow()).password_hash,
        factorSecrets: (await db.selectFrom('mfa_factors').select('secret').where('admin_id', '=', id).execute()).map((row) => row.secret),
        codeHashes: (await db.selectFrom('mfa_recovery_codes').select('code_hash').where('admin_id', '=', id).execute()).map((row) => row.code_hash),
        tokenHashes: (await db.selectFrom('refresh_tokens').select('token_hash').execute()).map((row) => row.token_hash),
        salts: (await db.selectFrom('events').select('personal_salt').where('admin_id', '=', id).execute()).map((row) => row.personal_salt ?? ''),
      };
      expect(stored.passwordHash).toMatch(/^\$argon2id\$/);
      expect(stored.salts.length).toBeGreaterThan(2);
      const secrets = [stored.passwordHash, totp.secret, ...stored.factorSecrets, ...(totp.confirmed.recovery_codes ?? []), ...stored.codeHashes, session.refresh_token, session.access_token, ...stored.tokenHashes, ...stored.salts];
      expect(secrets.filter((secret) => secret.length < 16)).toEqual([]);

      const result = ok(await run(['admin', 'export', ...ALICE]));
      const exported = parseJson<Record<'admin' | 'emails' | 'second_factors' | 'recovery_codes' | 'sessions' | 'sign_in_addresses' | 'audit_events', unknown[]>>(result);
      expect(Object.keys(exported)).toEqual(expect.arrayContaining(['admin', 'emails', 'second_factors', 'recovery_codes', 'sessions', 'sign_in_addresses', 'audit_events', 'notifications']));
      expect(exported.admin).toMatchObject({ id, school_id: 'lincoln-high', username: 'alice', has_password: true, deleted_at: null });
      expect(exported.emails).toMatchObject([{ address: 'alice@lincoln-high.example', source: 'operator' }]);
      expect(exported.second_factors).toMatchObject([{ type: 'totp', confirmed_at: expect.any(String) as unknown }]);
      expect(exported.recovery_codes).toHaveLength(totp.confirmed.recovery_codes?.length ?? -1);
      expect(exported.sessions).toMatchObject([{ ip: CLIENT.ip, user_agent: CLIENT.userAgent }]);
      expect(exported.sign_in_addresses).toMatchObject([{ ip: CLIENT.ip }]);
      expect((exported.audit_events as { type: string }[]).map((event) => event.type)).toEqual(expect.arrayContaining(['admin.created', 'admin.email_changed', 'login.success', 'mfa.enrolled']));
      for (const secret of secrets) expect(result.stdout.includes(secret), `a secret in the export: ${secret.slice(0, 12)}...`).toBe(false);

      const unknown = await run(['admin', 'export', ...SCHOOL, '--username', 'nobody']);
      expect(unknown).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: admin "nobody" does not exist in school "lincoln-high" (nor was deleted without erasure)\n' });
    });
  });

  test('prune without flags applies AUDIT_RETENTION_DAYS and SESSION_RETENTION_DAYS, flags override them, AUDIT_RETENTION_DAYS=0 keeps every event', SLOW, async ({ ws }) => {
    const checkpoints: number[] = [];
    /** The past, written by the service as it ran then: a session ended and sealed 800 days ago, another 100 days ago. */
    const past = async (env: Record<string, string>) => {
      const clock = new TestClock(Date.now() - 800 * DAY * 1000);
      const config = testConfig({ DATA_DIR: ws.dataDir, ...env });
      const services = await openServices(config, { clock, database: connect(config) });
      const app = await buildApp(services);
      try {
        await addSchool(services, 'lincoln-high', undefined);
        await addAdmin(services, { schoolId: 'lincoln-high', username: 'alice' }, PASSWORD);
        for (const advance of [0, 700 * DAY]) {
          clock.advance(advance);
          const login = await app.inject({ method: 'POST', url: '/admin/auth/login', payload: { school_id: 'lincoln-high', username: 'alice', password: PASSWORD } });
          expect(login.statusCode, login.body).toBe(200);
          expect((await app.inject({ method: 'POST', url: '/auth/logout', payload: { refresh_token: login.json<{ refresh_token: string }>().refresh_token } })).statusCode).toBe(204);
          clock.advance(120);
          await sealAll(services);
          checkpoints.push((await services.db.selectFrom('audit_sealer').select('seq').executeTakeFirstOrThrow()).seq);
        }
      } finally {
        await app.close();
        await closeServices(services);
      }
    };
    await withDatabase(ws, async (app, run) => {
      await app.signIn({ school_id: 'lincoln-high', username: 'alice', password: PASSWORD });
      await sealAll(app.services);
      const sessions = () => app.services.db.selectFrom('sessions').select('id').execute();
      const firstSeq = async () => (await app.services.db.selectFrom('events').select('seq').where('seq', 'is not', null).orderBy('seq').executeTakeFirstOrThrow()).seq;
      expect(await sessions()).toHaveLength(3);
      const [ancient = 0, old = 0] = checkpoints;

      expect(pruned(ok(await run(['prune'], { AUDIT_RETENTION_DAYS: '0', SESSION_RETENTION_DAYS: '1000' })).stdout)).toEqual({ sessions: 0, events: 0 });
      expect(await firstSeq()).toBe(1);
      expect(pruned(ok(await run(['prune'], { AUDIT_RETENTION_DAYS: '0', SESSION_RETENTION_DAYS: '365' })).stdout)).toEqual({ sessions: 1, events: 0 });
      expect(await sessions()).toHaveLength(2);
      // Flags win over the settings, either way.
      expect(pruned(ok(await run(['prune', '--events-older-than', '365', '--sessions-older-than', '1000'], { AUDIT_RETENTION_DAYS: '0', SESSION_RETENTION_DAYS: '10' })).stdout)).toEqual({
        sessions: 0,
        events: ancient,
      });
      expect(await firstSeq()).toBe(ancient + 1);
      // The defaults: 730 days of events, 7 of sessions.
      expect(pruned(ok(await run(['prune'])).stdout)).toEqual({ sessions: 1, events: 0 });
      expect(await sessions()).toHaveLength(1);
      expect(pruned(ok(await run(['prune'], { AUDIT_RETENTION_DAYS: '30' })).stdout)).toEqual({ sessions: 0, events: old - ancient });
      expect(await firstSeq()).toBe(old + 1);
      expect(ok(await run(['events', 'verify'])).stdout).toMatch(/^ok: /);
    }, past);
  });
});
