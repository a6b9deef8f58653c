import { setTimeout as sleep } from 'node:timers/promises';
import { decodeJwt } from 'jose';
import { describe, expect } from 'vitest';
import { cliTest as test, ISO_TIME, ok, parseJson, SLOW } from '../helpers/cli-workspace.js';

const PASSWORD = 'correct horse battery staple';
const ALICE = { school_id: 'lincoln-high', username: 'alice', password: PASSWORD };
const BOB = { school_id: 'lincoln-high', username: 'bob', password: PASSWORD };

interface SessionRow {
  session: string;
  username: string;
  status: string;
  created_at: string;
  last_used_at: string;
  expires_at: string;
  ip: string | null;
  user_agent: string | null;
  acr: string;
  amr: string;
}

function sessionId(accessToken: string): string {
  const { sid } = decodeJwt(accessToken);
  if (typeof sid !== 'string') throw new Error('access token without sid');
  return sid;
}

describe.concurrent('school-auth sessions', () => {
  test('sessions list shows sessions newest first with status and IP, as a table and as JSON; --username filters', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedSchool('oak-ridge');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    await app.seedAdmin('lincoln-high', 'bob', PASSWORD);
    const first = await app.signIn(ALICE, { ip: '203.0.113.5' });
    expect((await app.logout(first.refresh_token)).statusCode).toBe(204);
    await sleep(1100); // sessions are ordered by their creation second
    const second = await app.signIn(ALICE, { ip: '198.51.100.7' });
    const bob = await app.signIn(BOB, { ip: '192.0.2.44' });
    const s1 = sessionId(first.access_token);
    const s2 = sessionId(second.access_token);
    const s3 = sessionId(bob.access_token);

    const [all, alice, table, empty, unknown] = await Promise.all([
      ws.run(['sessions', 'list', '--school', 'lincoln-high', '--json']),
      ws.run(['sessions', 'list', '--school', 'LINCOLN-HIGH', '--username', 'ALICE', '--json']),
      ws.run(['sessions', 'list', '--school', 'lincoln-high']),
      ws.run(['sessions', 'list', '--school', 'oak-ridge']),
      ws.run(['sessions', 'list', '--school', 'ghost']),
    ]);

    const rows = parseJson<SessionRow[]>(ok(all));
    expect(rows).toHaveLength(3);
    // s2 and s3 share a creation second; s1 is a second older and comes last.
    expect(rows.slice(0, 2).map((row) => row.session).sort()).toEqual([s2, s3].sort());
    expect(rows[2]).toEqual({
      session: s1,
      username: 'alice',
      status: 'revoked (logout)',
      created_at: expect.stringMatching(ISO_TIME),
      last_used_at: expect.stringMatching(ISO_TIME),
      expires_at: expect.stringMatching(ISO_TIME),
      ip: '203.0.113.5',
      user_agent: expect.any(String),
      acr: 'aal1',
      amr: 'pwd',
    });
    const byId = new Map(rows.map((row) => [row.session, row]));
    expect(byId.get(s2)).toMatchObject({ username: 'alice', status: 'active', ip: '198.51.100.7' });
    expect(byId.get(s3)).toMatchObject({ username: 'bob', status: 'active', ip: '192.0.2.44' });
    for (const row of rows) {
      // The absolute lifetime (REFRESH_ABSOLUTE_LIFETIME, 43200 s by default) starts at sign-in.
      expect(Date.parse(row.expires_at) - Date.parse(row.created_at)).toBe(43_200_000);
      expect(Math.abs(Date.parse(row.created_at) - Date.now())).toBeLessThan(60_000);
    }

    expect(parseJson<SessionRow[]>(ok(alice)).map((row) => row.session)).toEqual([s2, s1]);

    const lines = ok(table).stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^session\s+username\s+status\s+created_at\s+last_used_at\s+expires_at\s+ip\s+user_agent\s+acr\s+amr$/);
    expect(lines[3]).toMatch(new RegExp(`^${s1}\\s+alice\\s+revoked \\(logout\\)\\s+\\d{4}-.*203\\.0\\.113\\.5\\s.*\\saal1\\s+pwd$`));

    expect(ok(empty).stdout).toBe('no sessions\n');
    expect(unknown).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: school "ghost" does not exist; create it with: school-auth school add ghost\n' });

    // Listing shows no secrets.
    for (const result of [all, table]) {
      expect(result.stdout).not.toContain(second.refresh_token);
      expect(result.stdout).not.toContain(PASSWORD);
    }
  });

  test('sessions revoke --session ends that session only; revoking it again says it had already ended', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    const first = await app.signIn(ALICE);
    const second = await app.signIn(ALICE);
    const sid = sessionId(first.access_token);

    const revoke = await ws.run(['sessions', 'revoke', '--session', sid]);
    expect(revoke).toMatchObject({ code: 0, stdout: `session ${sid} revoked\n`, stderr: '' });
    const refused = await app.refresh(first.refresh_token);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ detail: 'Invalid refresh token' });
    expect((await app.me(first.access_token)).statusCode).toBe(401);
    expect((await app.refresh(second.refresh_token)).statusCode).toBe(200);
    expect((await app.me(second.access_token)).statusCode).toBe(200);

    const again = await ws.run(['sessions', 'revoke', '--session', sid]);
    expect(again).toMatchObject({ code: 0, stdout: `session ${sid} had already ended\n`, stderr: '' });
  });

  test('sessions revoke --school --username ends every session of that admin and no one else', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    await app.seedAdmin('lincoln-high', 'bob', PASSWORD);
    const a1 = await app.signIn(ALICE);
    const a2 = await app.signIn(ALICE);
    const b1 = await app.signIn(BOB);

    const revoke = await ws.run(['sessions', 'revoke', '--school', 'Lincoln-High', '--username', 'ALICE']);
    expect(revoke).toMatchObject({ code: 0, stdout: '2 sessions revoked\n', stderr: '' });
    expect((await app.refresh(a1.refresh_token)).statusCode).toBe(401);
    expect((await app.refresh(a2.refresh_token)).statusCode).toBe(401);
    expect((await app.refresh(b1.refresh_token)).statusCode).toBe(200);
    // Revoking sessions does not lock the admin out.
    expect((await app.login(ALICE)).statusCode).toBe(200);
  });

  test('sessions revoke refuses a missing target, an unknown session and an unknown admin', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    const alice = await app.signIn(ALICE);
    const [none, schoolOnly, unknownSession, unknownAdmin] = await Promise.all([
      ws.run(['sessions', 'revoke']),
      ws.run(['sessions', 'revoke', '--school', 'lincoln-high']),
      ws.run(['sessions', 'revoke', '--session', 'no-such-session']),
      ws.run(['sessions', 'revoke', '--school', 'lincoln-high', '--username', 'nobody']),
    ]);
    const usage = 'school-auth: say which sessions to revoke: --session SID, or --school ID --username NAME\n';
    expect(none).toMatchObject({ code: 1, stdout: '', stderr: usage });
    expect(schoolOnly).toMatchObject({ code: 1, stdout: '', stderr: usage });
    expect(unknownSession).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'school-auth: session "no-such-session" does not exist; see: school-auth sessions list --school ID\n',
    });
    expect(unknownAdmin).toMatchObject({
      code: 1,
      stderr:
        'school-auth: admin "nobody" does not exist in school "lincoln-high"; ' +
        'create it with: school-auth admin add --school lincoln-high --username nobody\n',
    });
    expect((await app.refresh(alice.refresh_token)).statusCode).toBe(200);
  });
});
