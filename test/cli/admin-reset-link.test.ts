/** `admin reset-link [--send]` and `school recovery on|off`, real subprocesses, on each dialect. */
import { describe, expect } from 'vitest';
import { setAdminEmail } from '../../src/auth/accounts/admin-email.js';
import { setAdminEnabled } from '../../src/auth/accounts/admins.js';
import { openRecoveryCode } from '../../src/auth/accounts/recovery-code.js';
import { SSO_ONLY_PASSWORD_HASH } from '../../src/auth/sso/links.js';
import { insertAdmin } from '../../src/db/queries/admins.js';
import type { InProcessApp } from '../helpers/cli-app.js';
import { cliTest as test, ok, parseJson, SLOW, type Workspace } from '../helpers/cli-workspace.js';
import { createPostgresDatabase, TEST_DIALECTS } from '../helpers/database.js';
import { FORGOT_URL, INVALID_CODE, postReset } from '../helpers/recovery.js';

const PASSWORD = 'correct horse battery staple';
const PAGE = 'https://admin.lincoln-high.example/reset';
const ALICE = ['--school', 'lincoln-high', '--username', 'alice'] as const;
const alice = { schoolId: 'lincoln-high', username: 'alice' };
/** A code as printed: 256 bits, base64url. */
const CODE = /^[A-Za-z0-9_-]{43}$/;

const eventsOf = (app: InProcessApp, type: string) =>
  app.services.db.selectFrom('events').select(['username', 'detail']).where('type', '=', type).orderBy('id').execute();

describe.each(TEST_DIALECTS)('school-auth password recovery commands on %s', (dialect) => {
  /** `body` with an in-process app on this dialect's database (PostgreSQL: a database of its own, dropped after). */
  async function withDatabase(ws: Workspace, body: (app: InProcessApp, env: Record<string, string>) => Promise<void>) {
    const database = dialect === 'postgres' ? await createPostgresDatabase() : undefined;
    const env: Record<string, string> = database === undefined ? {} : { DATABASE_URL: database.url, ISSUER: 'https://auth.test' };
    const app = await ws.openApp(env);
    try {
      await app.seedSchool('lincoln-high');
      await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
      await body(app, env);
    } finally {
      await app.close();
      await database?.drop();
    }
  }

  test('reset-link prints the page link (or, without PASSWORD_RECOVERY_URL, the code); each works once and supersedes the one before', SLOW, async ({ ws }) => {
    await withDatabase(ws, async (app, env) => {
      const withPage = ok(await ws.run(['admin', 'reset-link', ...ALICE], { env: { ...env, PASSWORD_RECOVERY_URL: PAGE } }));
      const [intro, link, ...rest] = withPage.stdout.split('\n');
      expect([intro, rest]).toEqual(['give this link to "alice" (it works once, for 15 minutes):', ['']]);
      expect(link?.startsWith(`${PAGE}#`)).toBe(true);
      const fragment = new URLSearchParams(link?.slice(PAGE.length + 1));
      expect([...fragment.keys()]).toEqual(['school_id', 'username', 'code']);
      expect([fragment.get('school_id'), fragment.get('username')]).toEqual(['lincoln-high', 'alice']);
      const linked = fragment.get('code') ?? '';
      expect(linked).toMatch(CODE);
      expect((await postReset(app, alice, linked, 'chosen from the link page')).statusCode).toBe(204);
      expect((await postReset(app, alice, linked, 'chosen from the link again')).body).toBe(INVALID_CODE);
      await app.signIn({ school_id: 'lincoln-high', username: 'alice', password: 'chosen from the link page' });

      const bare = () => ws.run(['admin', 'reset-link', ...ALICE], { env: { ...env, PASSWORD_RECOVERY_URL: undefined } });
      const [first, second] = [ok(await bare()), ok(await bare())].map((run) => run.stdout.split('\n'));
      expect(first?.[0]).toBe('PASSWORD_RECOVERY_URL is not set, so here is the recovery code to give "alice" (it works once, for 15 minutes):');
      expect([first?.[1], second?.[1]]).toEqual([expect.stringMatching(CODE), expect.stringMatching(CODE)]);
      expect(first?.[1]).not.toBe(second?.[1]);
      expect((await postReset(app, alice, first?.[1] ?? '', 'from the superseded code')).statusCode).toBe(401);
      expect((await postReset(app, alice, second?.[1] ?? '', 'from the latest code 42')).statusCode).toBe(204);
      expect(await eventsOf(app, 'admin.recovery_link_created')).toEqual(Array(3).fill({ username: 'alice', detail: 'printed' }));
    });
  });

  test('reset-link --send queues one e-mail and prints no code; refused without an address, for an SSO-only or a disabled admin', SLOW, async ({ ws }) => {
    await withDatabase(ws, async (app, env) => {
      const run = (args: readonly string[]) => ws.run(args, { env: { ...env, PASSWORD_RECOVERY_URL: PAGE } });
      const noAddress = await run(['admin', 'reset-link', ...ALICE, '--send']);
      expect(noAddress).toMatchObject({ code: 1, stdout: '' });
      expect(noAddress.stderr).toBe('school-auth: admin "alice" has no e-mail address: set one with school-auth admin email set, or leave out --send\n');

      await setAdminEmail(app.services, alice, 'alice@lincoln-high.example');
      const sent = ok(await run(['admin', 'reset-link', ...ALICE, '--send']));
      expect(sent.stdout).toBe('a recovery link was mailed to "alice"; it works once, for 15 minutes\n');
      const outbox = await app.services.db.selectFrom('outbox').select(['type', 'channel', 'target', 'payload']).execute();
      const { id } = await app.services.db.selectFrom('admins').select('id').where('username', '=', 'alice').executeTakeFirstOrThrow();
      expect(outbox.map(({ type, channel, target }) => ({ type, channel, target }))).toEqual([{ type: 'password.recovery', channel: 'email', target: id }]);
      const mailed = openRecoveryCode(JSON.parse(outbox[0]?.payload ?? '{}').data.code, id, app.config.keyEncryption);
      expect(mailed).toMatch(CODE);
      expect(sent.stdout + sent.stderr).not.toContain(mailed);
      expect((await postReset(app, alice, mailed, 'chosen from the e-mail')).statusCode).toBe(204);

      const inserted = await insertAdmin(app.services.db, {
        id: 'sso-admin-1', school_key: 'lincoln-high', username_key: 'sam', username: 'sam', password_hash: SSO_ONLY_PASSWORD_HASH, disabled_at: null, created_at: 1, password_changed_at: 1,
      });
      expect(inserted).toBe(true);
      const sso = await run(['admin', 'reset-link', '--school', 'lincoln-high', '--username', 'sam']);
      expect(sso).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: admin "sam" signs in only through single sign-on: there is no password to recover\n' });
      await setAdminEnabled(app.services, alice, false);
      const disabled = await run(['admin', 'reset-link', ...ALICE]);
      expect(disabled).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: admin "alice" is disabled: enable them first (school-auth admin enable)\n' });
      // Only the command that succeeded made a code, a mail and an event.
      expect(await app.services.db.selectFrom('password_recoveries').select('admin_id').execute()).toEqual([]);
      expect(await app.services.db.selectFrom('outbox').select('type').where('type', '=', 'password.recovery').execute()).toHaveLength(1);
      expect(await eventsOf(app, 'admin.recovery_link_created')).toEqual([{ username: 'alice', detail: 'mailed' }]);
    });
  });

  test('school recovery off stops /password/forgot from making a code, on restores it; a bad word is refused; school list shows it', SLOW, async ({ ws }) => {
    await withDatabase(ws, async (first, env) => {
      const run = (args: readonly string[]) => ws.run(args, { env });
      const listed = async () => parseJson<{ school_id: string; password_recovery: string }[]>(ok(await run(['school', 'list', '--json']))).map((row) => row.password_recovery);
      await setAdminEmail(first.services, alice, 'alice@lincoln-high.example');
      expect(await listed()).toEqual(['on']);
      expect(ok(await run(['school', 'recovery', 'lincoln-high', 'off'])).stdout).toBe('school "lincoln-high": password recovery by e-mail off\n');
      expect(await listed()).toEqual(['off']);

      /** Asks for a code through HTTP in a fresh app, whose closing waits for the work after the 202. */
      const forgot = async () => {
        const app = await ws.openApp(env);
        const answer = await app.app.inject({ method: 'POST', url: FORGOT_URL, remoteAddress: '192.0.2.1', payload: { school_id: 'lincoln-high', username: 'alice' } });
        expect(answer.statusCode).toBe(202);
        await app.close();
        const codes = await first.services.db.selectFrom('password_recoveries').select('admin_id').execute();
        const mails = await first.services.db.selectFrom('outbox').select('type').where('type', '=', 'password.recovery').execute();
        return [codes.length, mails.length];
      };
      expect(await forgot()).toEqual([0, 0]);

      for (const word of ['maybe', 'ON']) {
        expect(await run(['school', 'recovery', 'lincoln-high', word])).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: the second argument is on or off\n' });
      }
      expect(await run(['school', 'recovery', 'ghost-school', 'on'])).toMatchObject({ code: 1, stdout: '' });
      expect(await listed()).toEqual(['off']);

      expect(ok(await run(['school', 'recovery', 'lincoln-high', 'on'])).stdout).toBe('school "lincoln-high": password recovery by e-mail on\n');
      expect(await listed()).toEqual(['on']);
      expect(await forgot()).toEqual([1, 1]);
      const recorded = await first.services.db.selectFrom('events').select(['school_id', 'detail']).where('type', '=', 'school.password_recovery').orderBy('id').execute();
      expect(recorded).toEqual([
        { school_id: 'lincoln-high', detail: 'off' },
        { school_id: 'lincoln-high', detail: 'on' },
      ]);
    });
  });
});
