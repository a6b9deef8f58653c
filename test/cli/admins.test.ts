import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { listAdmins } from '../../src/db/queries/admins.js';
import type { CliResult } from '../helpers/cli-run.js';
import { ISO_TIME, SLOW, cliTest as test, ok, parseJson } from '../helpers/cli-workspace.js';

const PASSWORD = 'correct horse battery staple';
const NEW_PASSWORD = 'a brand new passphrase 42';

interface AdminRow {
  school_id: string;
  username: string;
  id: string;
  status: string;
  second_factor: string;
  email: string | null;
  created_at: string;
  password_changed_at: string;
}

/** Everything a command printed: a password must never be part of it. */
function output(result: CliResult): string {
  return result.stdout + result.stderr;
}

describe.concurrent('school-auth admin add / list', () => {
  test('admin add --password-stdin creates admins that admin list shows and that can sign in', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedSchool('Oak-Ridge');
    await app.seedSchool('empty-school');

    const add = await ws.run(['admin', 'add', '--school', 'lincoln-high', '--username', 'Alice', '--password-stdin'], { input: `${PASSWORD}\n` });
    expect(add).toMatchObject({ code: 0, stdout: 'admin "Alice" created in school "lincoln-high"\n', stderr: '' });
    const addCarol = await ws.run(['admin', 'add', '--school', 'oak-ridge', '--username', 'carol', '--password-stdin'], { input: NEW_PASSWORD });
    expect(addCarol).toMatchObject({ code: 0, stdout: 'admin "carol" created in school "oak-ridge"\n' });
    expect(output(add)).not.toContain(PASSWORD);
    expect(output(addCarol)).not.toContain(NEW_PASSWORD);

    // The password was stored as typed (one trailing newline dropped) and the stored identity is returned.
    const login = await app.login({ school_id: 'LINCOLN-HIGH', username: 'alice', password: PASSWORD });
    expect(login.statusCode).toBe(200);
    expect(login.json()).toMatchObject({ school_id: 'lincoln-high', username: 'Alice' });
    expect((await app.login({ school_id: 'oak-ridge', username: 'carol', password: NEW_PASSWORD })).statusCode).toBe(200);

    const [table, all, oak, empty] = await Promise.all([
      ws.run(['admin', 'list']),
      ws.run(['admin', 'list', '--json']),
      ws.run(['admin', 'list', '--school', 'OAK-RIDGE', '--json']),
      ws.run(['admin', 'list', '--school', 'empty-school']),
    ]);
    const lines = ok(table).stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^school_id\s+username\s+id\s+status\s+second_factor\s+email\s+created_at\s+password_changed_at$/);
    expect(lines[1]).toMatch(/^lincoln-high\s+Alice\s+[0-9a-f-]{36}\s+enabled\s+none\s+-\s+\d{4}-/);
    expect(lines[2]).toMatch(/^Oak-Ridge\s+carol\s+[0-9a-f-]{36}\s+enabled\s+none\s+-\s+\d{4}-/);

    const rows = parseJson<AdminRow[]>(ok(all));
    const row = (schoolId: string, username: string) => ({
      school_id: schoolId,
      username,
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      status: 'enabled',
      second_factor: 'none',
      email: null,
      created_at: expect.stringMatching(ISO_TIME),
      password_changed_at: expect.stringMatching(ISO_TIME),
    });
    expect(rows).toEqual([row('lincoln-high', 'Alice'), row('Oak-Ridge', 'carol')]);
    const stored = await listAdmins(app.services.db);
    expect(rows.map((r) => r.id).sort()).toEqual(stored.map((admin) => admin.id).sort());
    expect(parseJson<AdminRow[]>(ok(oak))).toEqual([row('Oak-Ridge', 'carol')]);
    expect(ok(empty).stdout).toBe('no administrators\n');
    for (const result of [table, all, oak]) expect(output(result)).not.toContain('$argon2');
  });

  test('admin list shows who has a second factor and of which kinds (confirmed factors only)', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    for (const username of ['alice', 'bob', 'carol']) await app.seedAdmin('lincoln-high', username, PASSWORD);
    const admins = Object.fromEntries((await listAdmins(app.services.db)).map((admin) => [admin.username, admin.id]));
    const factor = (adminId: string | undefined, type: string, confirmed: boolean) => ({
      id: randomUUID(),
      admin_id: adminId ?? '',
      type,
      name: type,
      secret: '',
      confirmed_at: confirmed ? 1 : null,
      created_at: 1,
      last_used_at: null,
      last_used_step: null,
    });
    await app.services.db
      .insertInto('mfa_factors')
      .values([factor(admins.alice, 'totp', true), factor(admins.alice, 'webauthn', true), factor(admins.alice, 'webauthn', true), factor(admins.bob, 'totp', false)])
      .execute();

    const rows = parseJson<{ username: string; second_factor: string }[]>(ok(await ws.run(['admin', 'list', '--json'])));
    expect(rows.map(({ username, second_factor }) => ({ username, second_factor }))).toEqual([
      { username: 'alice', second_factor: '1 TOTP app, 2 passkeys' },
      { username: 'bob', second_factor: 'none' },
      { username: 'carol', second_factor: 'none' },
    ]);
  });

  test('admin add and admin list refuse an unknown school, and admin add a duplicate username in any case', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);

    const [unknownSchool, duplicate, listUnknown] = await Promise.all([
      ws.run(['admin', 'add', '--school', 'ghost', '--username', 'bob', '--password-stdin'], { input: NEW_PASSWORD }),
      ws.run(['admin', 'add', '--school', 'Lincoln-High', '--username', 'ALICE', '--password-stdin'], { input: NEW_PASSWORD }),
      ws.run(['admin', 'list', '--school', 'ghost']),
    ]);
    expect(unknownSchool).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'school-auth: school "ghost" does not exist; create it with: school-auth school add ghost\n',
    });
    expect(duplicate).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: admin "ALICE" already exists in school "lincoln-high"\n' });
    expect(listUnknown).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: school "ghost" does not exist; create it with: school-auth school add ghost\n' });
    for (const result of [unknownSchool, duplicate]) expect(output(result)).not.toContain(NEW_PASSWORD);

    // The existing admin keeps the first password.
    expect((await app.login({ school_id: 'lincoln-high', username: 'alice', password: PASSWORD })).statusCode).toBe(200);
    expect((await app.login({ school_id: 'lincoln-high', username: 'alice', password: NEW_PASSWORD })).statusCode).toBe(401);
    expect(await listAdmins(app.services.db)).toHaveLength(1);
  });

  test('admin add enforces at most 1024 characters, at least 12, and refuses the username or school id as password', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('springfield-high');
    const add = (username: string, password: string) =>
      ws.run(['admin', 'add', '--school', 'springfield-high', '--username', username, '--password-stdin'], { input: `${password}\n` });

    const tooShort = 'elevenchars';
    const tooLong = 'L'.repeat(1025);
    const longest = 'M'.repeat(1024);
    const [short, long, asUsername, asSchool, okLong] = await Promise.all([
      add('bob', tooShort),
      add('bob', tooLong),
      add('Administrator1', 'ADMINISTRATOR1'),
      add('bob', 'Springfield-High'),
      add('longest', longest),
    ]);
    expect(short).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: the password must be at least 12 characters long\n' });
    expect(long).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: the password must be at most 1024 characters long\n' });
    expect(asUsername).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: the password must not be the username\n' });
    expect(asSchool).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: the password must not be the school id\n' });
    expect(output(short)).not.toContain(tooShort);
    expect(output(long)).not.toContain(tooLong.slice(0, 100));
    expect(okLong).toMatchObject({ code: 0, stderr: '' });
    expect(output(okLong)).not.toContain('MMMMMMMMMMMM');

    expect((await listAdmins(app.services.db)).map((admin) => admin.username)).toEqual(['longest']);
    expect((await app.login({ school_id: 'springfield-high', username: 'longest', password: longest })).statusCode).toBe(200);
  });

  test('a password the CLI accepts can be used to sign in (decomposed accents: 1050 code points, 1020 after NFKC)', SLOW, async ({ ws }) => {
    // The CLI counts the length after NFKC; the login endpoint limits the password to 1024 code
    // points as sent. An admin whose accepted password is longer than that as typed could never sign in.
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    const password = 'a'.repeat(990) + 'e\u0301'.repeat(30);
    expect([...password]).toHaveLength(1050);
    expect([...password.normalize('NFKC')]).toHaveLength(1020);
    const add = await ws.run(['admin', 'add', '--school', 'lincoln-high', '--username', 'alice', '--password-stdin'], { input: password });
    if (add.code !== 0) {
      // Refusing such a password up front is an acceptable fix too.
      expect(add.stderr).toMatch(/at most 1024 characters/);
      return;
    }
    const login = await app.login({ school_id: 'lincoln-high', username: 'alice', password });
    expect(login.statusCode, `login answered ${login.statusCode}: ${login.body.slice(0, 200)}`).toBe(200);
  });

  test('--password-stdin drops exactly one trailing newline (LF or CRLF) and nothing else; 12 characters are enough', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    const add = (username: string, input: string) =>
      ws.run(['admin', 'add', '--school', 'lincoln-high', '--username', username, '--password-stdin'], { input });
    const results = await Promise.all([
      add('two-newlines', 'password-with-two\n\n'),
      add('no-newline', 'twelve-chars'),
      add('crlf', 'password-with-crlf\r\n'),
    ]);
    for (const result of results) expect(result).toMatchObject({ code: 0, stderr: '' });

    const status = async (username: string, password: string) =>
      (await app.login({ school_id: 'lincoln-high', username, password })).statusCode;
    expect(await status('two-newlines', 'password-with-two\n')).toBe(200);
    expect(await status('two-newlines', 'password-with-two')).toBe(401);
    expect(await status('no-newline', 'twelve-chars')).toBe(200);
    expect(await status('no-newline', 'twelve-char')).toBe(401);
    expect(await status('crlf', 'password-with-crlf')).toBe(200);
  });

  test('without --password-stdin and without a terminal, admin add and admin passwd refuse and say what to do', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    const [add, passwd] = await Promise.all([
      ws.run(['admin', 'add', '--school', 'lincoln-high', '--username', 'bob'], { input: `${NEW_PASSWORD}\n${NEW_PASSWORD}\n` }),
      ws.run(['admin', 'passwd', '--school', 'lincoln-high', '--username', 'alice'], { input: `${NEW_PASSWORD}\n${NEW_PASSWORD}\n` }),
    ]);
    const message = 'school-auth: no terminal to ask for the password; pipe it in with --password-stdin\n';
    expect(add).toMatchObject({ code: 1, stdout: '', stderr: message });
    expect(passwd).toMatchObject({ code: 1, stdout: '', stderr: message });
    expect((await listAdmins(app.services.db)).map((admin) => admin.username)).toEqual(['alice']);
    expect((await app.login({ school_id: 'lincoln-high', username: 'alice', password: PASSWORD })).statusCode).toBe(200);
  });

  test('there is no way to give the password in argv', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    const result = await ws.run(['admin', 'add', '--school', 'lincoln-high', '--username', 'bob', '--password', NEW_PASSWORD]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown option '--password'");
    expect(output(result)).not.toContain(NEW_PASSWORD);
    expect(await listAdmins(app.services.db)).toEqual([]);
  });
});

describe.concurrent('school-auth admin passwd / disable / enable', () => {
  test('admin passwd sets the new password, ends every session and leaves the old password useless', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    await app.seedAdmin('lincoln-high', 'bob', PASSWORD);
    const alice = await app.signIn({ school_id: 'lincoln-high', username: 'alice', password: PASSWORD });
    const bob = await app.signIn({ school_id: 'lincoln-high', username: 'bob', password: PASSWORD });

    const passwd = await ws.run(['admin', 'passwd', '--school', 'lincoln-high', '--username', 'ALICE', '--password-stdin'], { input: `${NEW_PASSWORD}\n` });
    expect(passwd).toMatchObject({ code: 0, stdout: 'password changed; 1 session ended\n', stderr: '' });
    expect(output(passwd)).not.toContain(NEW_PASSWORD);

    expect((await app.refresh(alice.refresh_token)).statusCode).toBe(401);
    expect((await app.refresh(bob.refresh_token)).statusCode).toBe(200);
    expect((await app.login({ school_id: 'lincoln-high', username: 'alice', password: PASSWORD })).statusCode).toBe(401);
    expect((await app.login({ school_id: 'lincoln-high', username: 'alice', password: NEW_PASSWORD })).statusCode).toBe(200);
  });

  test('admin passwd refuses an unknown admin (saying how to create it) and a too-short password', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    const alice = await app.signIn({ school_id: 'lincoln-high', username: 'alice', password: PASSWORD });
    const [unknown, short] = await Promise.all([
      ws.run(['admin', 'passwd', '--school', 'lincoln-high', '--username', 'nobody', '--password-stdin'], { input: NEW_PASSWORD }),
      ws.run(['admin', 'passwd', '--school', 'lincoln-high', '--username', 'alice', '--password-stdin'], { input: 'short-pw\n' }),
    ]);
    expect(unknown).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        'school-auth: admin "nobody" does not exist in school "lincoln-high"; ' +
        'create it with: school-auth admin add --school lincoln-high --username nobody\n',
    });
    expect(short).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: the password must be at least 12 characters long\n' });
    // Nothing changed: the old password works, the session lives.
    expect((await app.refresh(alice.refresh_token)).statusCode).toBe(200);
    expect((await app.login({ school_id: 'lincoln-high', username: 'alice', password: PASSWORD })).statusCode).toBe(200);
  });

  test('admin disable ends the sessions and refuses logins; admin enable lets the admin sign in again', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    await app.seedAdmin('lincoln-high', 'bob', PASSWORD);
    const first = await app.signIn({ school_id: 'lincoln-high', username: 'alice', password: PASSWORD });
    const second = await app.signIn({ school_id: 'lincoln-high', username: 'alice', password: PASSWORD });
    const bob = await app.signIn({ school_id: 'lincoln-high', username: 'bob', password: PASSWORD });

    const disable = await ws.run(['admin', 'disable', '--school', 'lincoln-high', '--username', 'Alice']);
    expect(disable).toMatchObject({ code: 0, stdout: 'admin "Alice" disabled; 2 sessions ended\n', stderr: '' });
    expect((await app.refresh(first.refresh_token)).statusCode).toBe(401);
    expect((await app.refresh(second.refresh_token)).statusCode).toBe(401);
    expect((await app.me(first.access_token)).statusCode).toBe(401);
    expect((await app.refresh(bob.refresh_token)).statusCode).toBe(200);
    const refused = await app.login({ school_id: 'lincoln-high', username: 'alice', password: PASSWORD });
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ detail: 'Incorrect username or password' });

    const listed = parseJson<AdminRow[]>(ok(await ws.run(['admin', 'list', '--json'])));
    expect(listed.map(({ username, status }) => ({ username, status }))).toEqual([
      { username: 'alice', status: 'disabled' },
      { username: 'bob', status: 'enabled' },
    ]);

    const enable = await ws.run(['admin', 'enable', '--school', 'lincoln-high', '--username', 'alice']);
    expect(enable).toMatchObject({ code: 0, stdout: 'admin "alice" enabled\n', stderr: '' });
    expect((await app.login({ school_id: 'lincoln-high', username: 'alice', password: PASSWORD })).statusCode).toBe(200);
    expect((await app.refresh(first.refresh_token)).statusCode).toBe(401);
  });

  test('admin disable and enable refuse an unknown admin or school', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    const [disable, enable] = await Promise.all([
      ws.run(['admin', 'disable', '--school', 'lincoln-high', '--username', 'nobody']),
      ws.run(['admin', 'enable', '--school', 'ghost', '--username', 'alice']),
    ]);
    expect(disable).toMatchObject({
      code: 1,
      stderr:
        'school-auth: admin "nobody" does not exist in school "lincoln-high"; ' +
        'create it with: school-auth admin add --school lincoln-high --username nobody\n',
    });
    expect(enable).toMatchObject({ code: 1, stderr: 'school-auth: school "ghost" does not exist; create it with: school-auth school add ghost\n' });
  });
});
