import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { listSchools } from '../../src/db/queries/schools.js';
import { ISO_TIME, SLOW, cliTest as test, ok, parseJson } from '../helpers/cli-workspace.js';

const PASSWORD = 'correct horse battery staple';

interface SchoolRow {
  school_id: string;
  name: string;
  status: string;
  mfa_policy: string;
  passkeys: string;
  password_recovery: string;
  sso: string | null;
  created_at: string;
}

describe.concurrent('school-auth school', () => {
  test('school list on an empty database says how to create a school (--json: see the .env test)', SLOW, async ({ ws }) => {
    ok(await ws.run(['migrate']));
    const text = ok(await ws.run(['school', 'list']));
    expect(text.stdout).toBe('no schools yet; create one with: school-auth school add <school_id>\n');
    expect(text.stderr).toBe('');
  });

  test('school add creates schools that school list shows as a table and as JSON', SLOW, async ({ ws }) => {
    const before = Date.now();
    const first = await ws.run(['school', 'add', 'lincoln-high', '--name', 'Lincoln High School']);
    expect(first).toMatchObject({ code: 0, stdout: 'school "lincoln-high" created\n', stderr: '' });
    const second = await ws.run(['school', 'add', 'Oak-Ridge']);
    expect(second).toMatchObject({ code: 0, stdout: 'school "Oak-Ridge" created\n', stderr: '' });

    const table = ok(await ws.run(['school', 'list']));
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^school_id\s+name\s+status\s+mfa_policy\s+passkeys\s+password_recovery\s+sso\s+created_at$/);
    expect(lines[1]).toMatch(/^lincoln-high\s+Lincoln High School\s+active\s+optional\s+allowed\s+on\s+-\s+\d{4}-\d{2}-\d{2}T[\d:.]+Z$/);
    expect(lines[2]).toMatch(/^Oak-Ridge\s+Oak-Ridge\s+active\s+optional\s+allowed\s+on\s+-\s+\d{4}-/);

    const rows = parseJson<SchoolRow[]>(ok(await ws.run(['school', 'list', '--json'])));
    expect(rows).toEqual([
      { school_id: 'lincoln-high', name: 'Lincoln High School', status: 'active', mfa_policy: 'optional', passkeys: 'allowed', password_recovery: 'on', sso: null, created_at: expect.stringMatching(ISO_TIME) },
      // Without --name the display name is the id.
      { school_id: 'Oak-Ridge', name: 'Oak-Ridge', status: 'active', mfa_policy: 'optional', passkeys: 'allowed', password_recovery: 'on', sso: null, created_at: expect.stringMatching(ISO_TIME) },
    ]);
    for (const row of rows) {
      const created = Date.parse(row.created_at);
      expect(created).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
      expect(created).toBeLessThanOrEqual(Date.now());
    }
  });

  test('school add refuses a duplicate id, whatever its case, and keeps the first school', SLOW, async ({ ws }) => {
    ok(await ws.run(['school', 'add', 'lincoln-high', '--name', 'First']));
    const otherCase = await ws.run(['school', 'add', 'LINCOLN-HIGH', '--name', 'Second']);
    expect(otherCase).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: school "LINCOLN-HIGH" already exists\n' });

    const { services } = await ws.app();
    const schools = await listSchools(services.db);
    expect(schools.map(({ school_id, name }) => ({ school_id, name }))).toEqual([{ school_id: 'lincoln-high', name: 'First' }]);
  });

  test('school add refuses empty, over-long and space-padded ids, and accepts 128 characters', SLOW, async ({ ws }) => {
    const empty = await ws.run(['school', 'add', '']);
    expect(empty).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: the school id must not be empty\n' });
    const [tooLong, padded, longest] = await Promise.all([
      ws.run(['school', 'add', 'x'.repeat(129)]),
      ws.run(['school', 'add', ' lincoln ']),
      ws.run(['school', 'add', 'y'.repeat(128)]),
    ]);
    expect(tooLong).toMatchObject({ code: 1, stderr: 'school-auth: the school id must be at most 128 characters long\n' });
    expect(padded).toMatchObject({ code: 1, stderr: 'school-auth: the school id must not start or end with spaces\n' });
    expect(longest).toMatchObject({ code: 0, stderr: '' });

    const { services } = await ws.app();
    expect((await listSchools(services.db)).map((school) => school.school_id)).toEqual(['y'.repeat(128)]);
  });

  test('school suspend and resume of an unknown school say how to create it', SLOW, async ({ ws }) => {
    const [suspend, resume] = [await ws.run(['school', 'suspend', 'ghost-school']), await ws.run(['school', 'resume', 'ghost-school'])];
    const message = 'school-auth: school "ghost-school" does not exist; create it with: school-auth school add ghost-school\n';
    expect(suspend).toMatchObject({ code: 1, stdout: '', stderr: message });
    expect(resume).toMatchObject({ code: 1, stdout: '', stderr: message });
  });

  test('school suspend ends the sessions of that school only and refuses logins until school resume', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedSchool('oak-ridge');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    await app.seedAdmin('lincoln-high', 'bob', PASSWORD);
    await app.seedAdmin('oak-ridge', 'carol', PASSWORD);
    const alice = await app.signIn({ school_id: 'lincoln-high', username: 'alice', password: PASSWORD });
    const bob = await app.signIn({ school_id: 'lincoln-high', username: 'bob', password: PASSWORD });
    const carol = await app.signIn({ school_id: 'oak-ridge', username: 'carol', password: PASSWORD });
    expect((await app.refresh(alice.refresh_token)).statusCode).toBe(200);

    const suspend = await ws.run(['school', 'suspend', 'LINCOLN-HIGH']);
    expect(suspend).toMatchObject({ code: 0, stdout: 'school "LINCOLN-HIGH" suspended; 2 sessions ended\n', stderr: '' });

    const refreshed = await app.refresh(alice.refresh_token);
    expect(refreshed.statusCode).toBe(401);
    expect(refreshed.json()).toEqual({ detail: 'Invalid refresh token' });
    expect((await app.refresh(bob.refresh_token)).statusCode).toBe(401);
    expect((await app.me(alice.access_token)).statusCode).toBe(401);
    expect((await app.refresh(carol.refresh_token)).statusCode).toBe(200);
    expect((await app.login({ school_id: 'lincoln-high', username: 'alice', password: PASSWORD })).statusCode).toBe(401);

    const listed = parseJson<SchoolRow[]>(ok(await ws.run(['school', 'list', '--json'])));
    expect(listed.map(({ school_id, status }) => ({ school_id, status }))).toEqual([
      { school_id: 'lincoln-high', status: 'suspended' },
      { school_id: 'oak-ridge', status: 'active' },
    ]);

    const resume = await ws.run(['school', 'resume', 'lincoln-high']);
    expect(resume).toMatchObject({ code: 0, stdout: 'school "lincoln-high" resumed\n', stderr: '' });
    expect((await app.login({ school_id: 'lincoln-high', username: 'alice', password: PASSWORD })).statusCode).toBe(200);
    // Resuming lets admins sign in again; it does not bring ended sessions back.
    expect((await app.refresh(alice.refresh_token)).statusCode).toBe(401);
  });

  test('commands read a .env file in the working directory; real environment variables win over it', SLOW, async ({ ws }) => {
    writeFileSync(join(ws.root, '.env'), 'DATA_DIR=./from-dotenv\n');
    ok(await ws.run(['school', 'add', 'dotenv-school'], { env: { DATA_DIR: undefined } }));
    expect(existsSync(join(ws.root, 'from-dotenv', 'school-auth.sqlite'))).toBe(true);
    expect(existsSync(ws.dataDir)).toBe(false);

    // DATA_DIR from the environment: a database without schema, which a read-only command refuses.
    const listed = await ws.run(['school', 'list', '--json']);
    expect(listed).toMatchObject({ code: 1, stderr: 'school-auth: the database schema is missing or out of date; apply it with: school-auth migrate\n' });
    expect(existsSync(join(ws.dataDir, 'school-auth.sqlite'))).toBe(true);
  });

  test('an invalid setting stops a command before it touches the database, naming the variable', SLOW, async ({ ws }) => {
    const result = await ws.run(['school', 'add', 'lincoln-high'], { env: { JWT_ALG: 'HS256', PORT: 'eighty' } });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('JWT_ALG="HS256": expected one of ES256, EdDSA, RS256');
    expect(result.stderr).toContain('PORT="eighty"');
    expect(result.stderr).not.toContain('    at ');
    expect(existsSync(ws.dataDir)).toBe(false);
  });

  test('a missing argument exits 2 with a usage error, before the database is opened', SLOW, async ({ ws }) => {
    const missing = await ws.run(['school', 'add']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing required argument 'school_id'");
    expect(existsSync(ws.dataDir)).toBe(false);
  });

  test('several commands started together on a new DATA_DIR all succeed (first-start migration race)', SLOW, async ({ ws }) => {
    // A race: on the original code one of four commands failed in about one run out of three.
    const ids = ['s-one', 's-two', 's-three', 's-four'];
    const results = await Promise.all(ids.map((id) => ws.run(['school', 'add', id])));
    for (const result of results) {
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    }
    const { services } = await ws.app();
    expect((await listSchools(services.db)).map((school) => school.school_id).sort()).toEqual([...ids].sort());
  });
});
