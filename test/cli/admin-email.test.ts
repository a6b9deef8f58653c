/** `admin add --email`, `admin email set`, and the addresses `admin list` shows, on each dialect. */
import { describe, expect } from 'vitest';
import { replaceEmails } from '../../src/db/queries/admin-emails.js';
import { deliverRound } from '../../src/delivery/delivery-round.js';
import { createMailer } from '../../src/delivery/email-send.js';
import type { InProcessApp } from '../helpers/cli-app.js';
import { cliTest as test, ok, parseJson, SLOW, type Workspace } from '../helpers/cli-workspace.js';
import { createPostgresDatabase, TEST_DIALECTS } from '../helpers/database.js';
import { SMTP_FROM, startSmtpServer } from '../helpers/smtp-server.js';

const PASSWORD = 'correct horse battery staple';
const SCHOOL = ['--school', 'lincoln-high'] as const;
const ALICE = [...SCHOOL, '--username', 'alice'] as const;

/** The stored addresses, per username, with where each came from. */
async function storedEmails(app: InProcessApp) {
  const rows = await app.services.db
    .selectFrom('admin_emails')
    .innerJoin('admins', 'admins.id', 'admin_emails.admin_id')
    .select(['admins.username', 'admin_emails.address', 'admin_emails.source'])
    .orderBy('admins.username')
    .orderBy('admin_emails.source')
    .execute();
  return rows;
}

describe.each(TEST_DIALECTS)('school-auth admin e-mail addresses on %s', (dialect) => {
  /** `body` with an in-process app on this dialect's database (PostgreSQL: a database of its own, dropped after). */
  async function withDatabase(ws: Workspace, body: (app: InProcessApp, env: Record<string, string>) => Promise<void>, extra: Record<string, string> = {}) {
    const database = dialect === 'postgres' ? await createPostgresDatabase() : undefined;
    const env: Record<string, string> = database === undefined ? {} : { DATABASE_URL: database.url, ISSUER: 'https://auth.test' };
    const app = await ws.openApp({ ...env, ...extra });
    try {
      await app.seedSchool('lincoln-high');
      await body(app, env);
    } finally {
      await app.close();
      await database?.drop();
    }
  }

  test('admin add --email stores the address; a bad address creates nothing; admin list shows every address', SLOW, async ({ ws }) => {
    await withDatabase(ws, async (app, env) => {
      const run = (args: readonly string[], input?: string) => ws.run(args, { env, input });
      const add = await run(['admin', 'add', ...ALICE, '--password-stdin', '--email', ' Alice@Lincoln-High.EXAMPLE '], PASSWORD);
      expect(ok(add).stdout).toBe('admin "alice" created in school "lincoln-high"\n');
      ok(await run(['admin', 'add', ...SCHOOL, '--username', 'bob', '--password-stdin'], PASSWORD));
      const bad = await run(['admin', 'add', ...SCHOOL, '--username', 'carol', '--password-stdin', '--email', 'carol at school'], PASSWORD);
      expect(bad).toMatchObject({ code: 1, stdout: '' });
      expect(bad.stderr).toBe('school-auth: --email: "carol at school" is not an e-mail address\n');

      // Trimmed, the domain lowercased, the local part as given; carol was not created.
      expect(await storedEmails(app)).toEqual([{ username: 'alice', address: 'Alice@lincoln-high.example', source: 'operator' }]);
      expect((await app.services.db.selectFrom('admins').select('username').orderBy('username').execute()).map((row) => row.username)).toEqual(['alice', 'bob']);

      const [alice] = await app.services.db.selectFrom('admins').select('id').where('username', '=', 'alice').execute();
      await replaceEmails(app.services.db, alice?.id ?? '', 'sso', [{ address: 'asmith@district.example', type: null }], 1);
      const listed = parseJson<{ username: string; email: string | null }[]>(ok(await run(['admin', 'list', '--json'])));
      expect(listed.map(({ username, email }) => ({ username, email }))).toEqual([
        { username: 'alice', email: 'Alice@lincoln-high.example,asmith@district.example' },
        { username: 'bob', email: null },
      ]);
      const table = ok(await run(['admin', 'list'])).stdout.trimEnd().split('\n');
      expect(table[0]).toMatch(/^school_id\s+username\s+id\s+status\s+second_factor\s+email\s+created_at\s+password_changed_at$/);
      expect(table[1]).toMatch(/^lincoln-high\s+alice\s+\S+\s+enabled\s+none\s+Alice@lincoln-high\.example,asmith@district\.example\s+\d{4}-/);
      expect(table[2]).toMatch(/^lincoln-high\s+bob\s+\S+\s+enabled\s+none\s+-\s+\d{4}-/);
    });
  });

  test('admin email set --email replaces the operator address, --remove removes it and keeps the SSO one', SLOW, async ({ ws }) => {
    await withDatabase(ws, async (app, env) => {
      const run = (args: readonly string[]) => ws.run(args, { env });
      await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
      const [alice] = await app.services.db.selectFrom('admins').select('id').where('username', '=', 'alice').execute();
      await replaceEmails(app.services.db, alice?.id ?? '', 'sso', [{ address: 'asmith@district.example', type: null }], 1);

      expect(ok(await run(['admin', 'email', 'set', ...ALICE, '--email', 'alice@lincoln-high.example'])).stdout).toBe('admin "alice" is told at alice@lincoln-high.example\n');
      ok(await run(['admin', 'email', 'set', ...ALICE, '--email', 'alice.new@Lincoln-High.example']));
      expect(await storedEmails(app)).toEqual([
        { username: 'alice', address: 'alice.new@lincoln-high.example', source: 'operator' },
        { username: 'alice', address: 'asmith@district.example', source: 'sso' },
      ]);
      expect(ok(await run(['admin', 'email', 'set', ...ALICE, '--remove'])).stdout).toBe('admin "alice": address removed\n');
      expect(await storedEmails(app)).toEqual([{ username: 'alice', address: 'asmith@district.example', source: 'sso' }]);

      for (const args of [[], ['--email', 'a@b.example', '--remove']]) {
        const refused = await run(['admin', 'email', 'set', ...ALICE, ...args]);
        expect(refused).toMatchObject({ code: 1, stderr: 'school-auth: give --email <address> or --remove\n' });
      }
      const bad = await run(['admin', 'email', 'set', ...ALICE, '--email', 'no-at-sign.example']);
      expect(bad).toMatchObject({ code: 1, stderr: 'school-auth: --email: "no-at-sign.example" is not an e-mail address\n' });
      const unknown = await run(['admin', 'email', 'set', ...SCHOOL, '--username', 'nobody', '--email', 'x@y.example']);
      expect(unknown.code).toBe(1);
      expect(await storedEmails(app)).toEqual([{ username: 'alice', address: 'asmith@district.example', source: 'sso' }]);

      const events = await app.services.db.selectFrom('events').select(['type', 'detail', 'username']).where('type', '=', 'admin.email_changed').orderBy('id').execute();
      expect(events).toEqual([
        { type: 'admin.email_changed', username: 'alice', detail: 'alice@lincoln-high.example' },
        { type: 'admin.email_changed', username: 'alice', detail: 'alice.new@lincoln-high.example' },
        { type: 'admin.email_changed', username: 'alice', detail: 'removed' },
      ]);
    });
  });

  test('admin passwd of an admin added with --email writes an e-mail that a delivery round sends', SLOW, async ({ ws }) => {
    const server = await startSmtpServer();
    try {
      await withDatabase(
        ws,
        async (app, env) => {
          ok(await ws.run(['admin', 'add', ...ALICE, '--password-stdin', '--email', 'alice@lincoln-high.example'], { env, input: PASSWORD }));
          ok(await ws.run(['admin', 'passwd', ...ALICE, '--password-stdin'], { env, input: 'a brand new passphrase 42' }));
          const smtp = app.config.notifications.smtp;
          expect(smtp).toEqual({ url: server.url, from: SMTP_FROM });
          const mailer = createMailer(smtp ?? { url: '', from: '' });
          try {
            expect(await deliverRound(app.services, { mailer, policy: { allowPrivate: [] } }, app.services.outbox, 'cli-test')).toBe(1);
          } finally {
            mailer.close();
          }
          expect(server.received.map((mail) => mail.to)).toEqual([['alice@lincoln-high.example']]);
          expect(server.received[0]?.raw).toContain('The password of your account was changed.');
          const rows = await app.services.db.selectFrom('outbox').select(['type', 'state']).execute();
          expect(rows).toEqual([{ type: 'admin.password_changed', state: 'delivered' }]);
        },
        { SMTP_URL: server.url, SMTP_FROM },
      );
    } finally {
      await server.close();
    }
  });
});
