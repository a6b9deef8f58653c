import { sql } from 'kysely';
import { describe, expect } from 'vitest';
import { cliTest as test, ok, parseJson, SLOW } from '../helpers/cli-workspace.js';

const PASSWORD = 'correct horse battery staple';

/**
 * Ids are printed by the listings and pasted back as arguments. Base64url kids and session ids
 * begin with `-` about once in 64; school ids and usernames may too. Each command takes them as
 * printed, in a positional slot or as an option's value, while its real options keep working.
 */
describe.concurrent('ids that begin with "-"', () => {
  test('keys revoke takes a kid that begins with "-" (and one that begins with "--")', SLOW, async ({ ws }) => {
    const app = await ws.app();
    const [key] = await app.services.db.selectFrom('signing_keys').select(['kid', 'public_jwk']).execute();
    const dashKid = `-${key?.kid.slice(1) ?? ''}`;
    // A stored key under the kid a listing would print: the thumbprint's first character is a dash.
    await sql`update signing_keys set kid = ${dashKid}, public_jwk = ${(key?.public_jwk ?? '').replace(key?.kid ?? '', dashKid)}`.execute(app.services.db);

    const revoke = await ws.run(['keys', 'revoke', dashKid]);
    expect(revoke.stderr).toBe('');
    expect(ok(revoke).stdout).toMatch(new RegExp(`^key ${dashKid} revoked: `));
    const keys = parseJson<{ kid: string; state: string }[]>(ok(await ws.run(['keys', 'list', '--json'])));
    expect(keys.find((listed) => listed.kid === dashKid)?.state).toBe('revoked');

    const doubleDash = await ws.run(['keys', 'revoke', '--no-such-kid']);
    expect(doubleDash).toMatchObject({ code: 1, stderr: 'school-auth: no signing key "--no-such-kid"; see the kids with: school-auth keys list\n' });
    // -V is the program's --version only before a command.
    const versionLike = await ws.run(['keys', 'revoke', '-Vx']);
    expect(versionLike).toMatchObject({ code: 1, stderr: 'school-auth: no signing key "-Vx"; see the kids with: school-auth keys list\n' });
  });

  test('school commands take a school id that begins with "-", before or after their options', SLOW, async ({ ws }) => {
    expect(await ws.run(['school', 'add', '-east', '--name', 'East Campus'])).toMatchObject({ code: 0, stdout: 'school "-east" created\n', stderr: '' });
    expect(await ws.run(['school', 'add', '--name', 'West Campus', '--west'])).toMatchObject({ code: 0, stdout: 'school "--west" created\n' });
    expect(await ws.run(['school', 'mfa', '-east', 'required'])).toMatchObject({ code: 0, stdout: 'school "-east": second factor required; 0 password-only sessions ended\n' });
    expect(await ws.run(['school', 'suspend', '-east'])).toMatchObject({ code: 0, stdout: 'school "-east" suspended; 0 sessions ended\n' });
    expect(await ws.run(['school', 'resume', '-east'])).toMatchObject({ code: 0, stdout: 'school "-east" resumed\n' });
    const schools = parseJson<{ school_id: string; name: string; mfa_policy: string }[]>(ok(await ws.run(['school', 'list', '--json'])));
    expect(schools.map(({ school_id, name, mfa_policy }) => ({ school_id, name, mfa_policy }))).toEqual([
      { school_id: '--west', name: 'West Campus', mfa_policy: 'optional' },
      { school_id: '-east', name: 'East Campus', mfa_policy: 'required' },
    ]);

    // Real options and real mistakes are still told apart from ids.
    expect(await ws.run(['school', 'add', 'north', '--nmae', 'North'])).toMatchObject({ code: 2, stdout: '' });
    expect(await ws.run(['school', 'suspend', '-east', 'extra'])).toMatchObject({ code: 2, stdout: '' });
    const help = await ws.run(['school', 'suspend', '--help']);
    expect(help).toMatchObject({ code: 0 });
    expect(help.stdout).toContain('Usage: school-auth school suspend');
  });

  test('admin and session commands take school ids, usernames and session ids that begin with "-"', SLOW, async ({ ws }) => {
    ok(await ws.run(['school', 'add', '-east']));
    const add = await ws.run(['admin', 'add', '--school', '-east', '--username', '-bob', '--password-stdin'], { input: `${PASSWORD}\n` });
    expect(add).toMatchObject({ code: 0, stdout: 'admin "-bob" created in school "-east"\n' });
    const admins = parseJson<{ school_id: string; username: string }[]>(ok(await ws.run(['admin', 'list', '--school', '-east', '--json'])));
    expect(admins.map(({ school_id, username }) => ({ school_id, username }))).toEqual([{ school_id: '-east', username: '-bob' }]);
    expect(await ws.run(['admin', 'mfa', 'list', '--school', '-east', '--username', '-bob'])).toMatchObject({ code: 0, stdout: 'no second factor\n0 recovery codes left\n' });
    expect(await ws.run(['admin', 'disable', '--school', '-east', '--username', '-bob'])).toMatchObject({ code: 0, stdout: 'admin "-bob" disabled; 0 sessions ended\n' });
    expect(await ws.run(['sessions', 'list', '--school', '-east'])).toMatchObject({ code: 0, stdout: 'no sessions\n' });
    expect(await ws.run(['admin', 'enable', '--school', '-east', '--username', '-bob'])).toMatchObject({ code: 0, stdout: 'admin "-bob" enabled\n' });
    expect(await ws.run(['admin', 'unlock', '--school', '-east', '--username', '-bob'])).toMatchObject({ code: 0, stdout: 'admin "-bob" unlocked\n' });
    expect(await ws.run(['admin', 'mfa', 'reset', '--school', '-east', '--username', '-bob'])).toMatchObject({ code: 0, stdout: 'second factor reset: 0 factors removed; 0 sessions ended\n' });
    expect(await ws.run(['sessions', 'revoke', '--school', '-east', '--username', '-bob'])).toMatchObject({ code: 0, stdout: '0 sessions revoked\n' });
    const passwd = await ws.run(['admin', 'passwd', '--school', '-east', '--username', '-bob', '--password-stdin'], { input: `${PASSWORD} 2\n` });
    expect(passwd).toMatchObject({ code: 0, stdout: 'password changed; 0 sessions ended\n' });
    const session = await ws.run(['sessions', 'revoke', '--session', '-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']);
    expect(session).toMatchObject({
      code: 1,
      stderr: 'school-auth: session "-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" does not exist; see: school-auth sessions list --school ID\n',
    });
  });
});
