import { userInfo } from 'node:os';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { describe, expect } from 'vitest';
import { cliTest as test, ISO_TIME, ok, parseJson, SLOW } from '../helpers/cli-workspace.js';

const PASSWORD = 'correct horse battery staple';
const ALICE = { school_id: 'lincoln-high', username: 'alice', password: PASSWORD };

interface KeyRow {
  kid: string;
  alg: string;
  state: string;
  created_at: string;
  signs_from: string;
  signs_until: string | null;
}

interface EventRow {
  at: string;
  type: string;
  school_id: string | null;
  username: string | null;
  ip: string | null;
  user_agent: string | null;
  detail: string | null;
  session: string | null;
  admin_id: string | null;
  erased: boolean;
}

const ROTATED = /^new ES256 key (\S+) published; it signs from (\S+)\. The previous key stays published until its tokens have expired\.\n$/;

/** `at` (whole seconds, in ms) lies between two wall-clock readings taken around the command. */
function expectWithin(at: number, from: number, to: number): void {
  expect(at).toBeGreaterThanOrEqual(Math.floor(from / 1000) * 1000);
  expect(at).toBeLessThanOrEqual(to);
}

/** Waits until the wall clock enters a new second: key schedules have one-second resolution. */
async function nextSecond(): Promise<void> {
  await sleep(1000 - (Date.now() % 1000) + 20);
}

describe.concurrent('school-auth keys', () => {
  test('keys list shows the active key that signs tokens; keys rotate publishes a pending key that does not sign yet', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    const before = await app.signIn(ALICE);
    const signingKid = decodeProtectedHeader(before.access_token).kid;

    const table = ok(await ws.run(['keys', 'list']));
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^kid\s+alg\s+state\s+created_at\s+signs_from\s+signs_until$/);
    expect(lines[1]).toMatch(new RegExp(`^${signingKid}\\s+ES256\\s+active\\s+\\S+Z\\s+\\S+Z\\s+-$`));

    const startedAt = Date.now();
    const rotate = await ws.run(['keys', 'rotate']);
    expect(rotate.code).toBe(0);
    expect(rotate.stderr).toBe('');
    const [, newKid, signsFrom] = ROTATED.exec(rotate.stdout) ?? [];
    expect(newKid).toBeDefined();
    expect(newKid).not.toBe(signingKid);
    // KEY_ACTIVATION_DELAY defaults to 60 s.
    expectWithin(Date.parse(signsFrom ?? ''), startedAt + 60_000, Date.now() + 60_000);

    const keys = parseJson<KeyRow[]>(ok(await ws.run(['keys', 'list', '--json'])));
    expect(keys).toEqual([
      { kid: signingKid, alg: 'ES256', state: 'active', created_at: expect.stringMatching(ISO_TIME), signs_from: expect.stringMatching(ISO_TIME), signs_until: null },
      { kid: newKid, alg: 'ES256', state: 'pending', created_at: expect.stringMatching(ISO_TIME), signs_from: signsFrom, signs_until: null },
    ]);

    // A fresh instance (no key cache) publishes the pending key but still signs with the old one.
    const fresh = await ws.openApp();
    const jwks = (await fresh.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json<{ keys: { kid: string }[] }>();
    expect(jwks.keys.map((key) => key.kid).sort()).toEqual([signingKid, newKid].sort());
    const after = await fresh.signIn(ALICE);
    expect(decodeProtectedHeader(after.access_token).kid).toBe(signingKid);
  });

  test('keys rotate with KEY_ACTIVATION_DELAY=0 signs with the new key at once; the old key stays published', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    const before = await app.signIn(ALICE);
    const oldKid = decodeProtectedHeader(before.access_token).kid;
    await nextSecond();

    const startedAt = Date.now();
    const rotate = await ws.run(['keys', 'rotate'], { env: { KEY_ACTIVATION_DELAY: '0' } });
    const [, newKid, signsFrom] = ROTATED.exec(ok(rotate).stdout) ?? [];
    expectWithin(Date.parse(signsFrom ?? ''), startedAt, Date.now());

    const keys = parseJson<KeyRow[]>(ok(await ws.run(['keys', 'list', '--json'])));
    expect(keys.map(({ kid, state, signs_until }) => ({ kid, state, signs_until }))).toEqual([
      { kid: oldKid, state: 'retiring', signs_until: signsFrom },
      { kid: newKid, state: 'active', signs_until: null },
    ]);

    const fresh = await ws.openApp();
    const after = await fresh.signIn(ALICE);
    expect(decodeProtectedHeader(after.access_token).kid).toBe(newKid);
    // Tokens signed by the old key keep verifying until they expire.
    expect((await fresh.me(before.access_token)).statusCode).toBe(200);
    const jwks = (await fresh.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json<{ keys: { kid: string }[] }>();
    expect(jwks.keys.map((key) => key.kid).sort()).toEqual([oldKid, newKid].sort());
  });
});

describe.concurrent('school-auth events', () => {
  test('events lists sign-ins, failures, logouts and revocations newest first, with school, username, IP and user agent', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedSchool('oak-ridge');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    await app.seedAdmin('oak-ridge', 'carol', PASSWORD);
    const browser = { ip: '203.0.113.9', userAgent: 'Mozilla/5.0 (X11) Firefox/128.0' };
    const attacker = { ip: '198.51.100.23', userAgent: 'curl/8.5.0' };
    const wrongPassword = 'not-the-right-password-9';

    const first = await app.signIn(ALICE, browser);
    expect((await app.login({ ...ALICE, password: wrongPassword }, attacker)).statusCode).toBe(401);
    expect((await app.login({ school_id: 'lincoln-high', username: 'Mallory', password: wrongPassword }, attacker)).statusCode).toBe(401);
    expect((await app.logout(first.refresh_token, browser)).statusCode).toBe(204);
    const second = await app.signIn(ALICE, browser);
    await app.signIn({ school_id: 'oak-ridge', username: 'carol', password: PASSWORD }, { ip: '192.0.2.1', userAgent: 'Safari' });
    const sid1 = decodeJwt(first.access_token).sid;
    const sid2 = decodeJwt(second.access_token).sid;
    ok(await ws.run(['sessions', 'revoke', '--session', String(sid2)]));

    const [all, oak, limited, table, nothing] = await Promise.all([
      ws.run(['events', '--json']),
      ws.run(['events', '--school', 'OAK-RIDGE', '--json']),
      ws.run(['events', '--limit', '2', '--json']),
      ws.run(['events']),
      ws.run(['events', '--school', 'nowhere']),
    ]);

    const events = parseJson<EventRow[]>(ok(all));
    expect(events.map((event) => event.type)).toEqual([
      'session.revoked',
      'login.success',
      'login.success',
      'logout',
      'login.failure',
      'login.failure',
      'login.success',
      'admin.created',
      'admin.created',
      'school.created',
      'school.created',
      'keys.created',
    ]);
    for (const event of events) expect(event.at).toMatch(ISO_TIME);
    const times = events.map((event) => Date.parse(event.at));
    expect(times).toEqual([...times].sort((a, b) => b - a));

    const lincoln = { school_id: 'lincoln-high', username: 'alice' };
    expect(events[0]).toEqual({ at: expect.any(String), type: 'session.revoked', ...lincoln, ip: null, user_agent: `school-auth-cli (os user ${userInfo().username})`, detail: null, session: sid2, admin_id: expect.any(String), erased: false });
    expect(events[1]).toMatchObject({ type: 'login.success', school_id: 'oak-ridge', username: 'carol', ip: '192.0.2.1', user_agent: 'Safari' });
    expect(events[2]).toMatchObject({ type: 'login.success', ...lincoln, ip: browser.ip, user_agent: browser.userAgent, session: sid2 });
    expect(events[3]).toMatchObject({ type: 'logout', ...lincoln, ip: browser.ip, user_agent: browser.userAgent, session: sid1 });
    expect(events[4]).toMatchObject({ type: 'login.failure', school_id: 'lincoln-high', username: 'Mallory', ip: attacker.ip, user_agent: attacker.userAgent, session: null });
    expect(events[5]).toMatchObject({ type: 'login.failure', ...lincoln, ip: attacker.ip, user_agent: attacker.userAgent, session: null });
    expect(events[6]).toMatchObject({ type: 'login.success', ...lincoln, ip: browser.ip, user_agent: browser.userAgent, session: sid1 });

    // No secret ever reaches the audit trail.
    for (const result of [all, table]) {
      for (const secret of [PASSWORD, wrongPassword, first.refresh_token, second.refresh_token, first.access_token]) {
        expect(result.stdout).not.toContain(secret);
      }
    }

    const oakEvents = parseJson<EventRow[]>(ok(oak));
    expect(oakEvents.map((event) => event.type)).toEqual(['login.success', 'admin.created', 'school.created']);
    for (const event of oakEvents) expect(event.school_id).toBe('oak-ridge');

    expect(parseJson<EventRow[]>(ok(limited))).toEqual(events.slice(0, 2));

    const lines = ok(table).stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(events.length + 1);
    // For people: what happened in words, and who did it, in one cell.
    expect(lines[0]).toMatch(/^at\s+school_id\s+username\s+event\s+by\s+session$/);
    expect(lines[1]).toMatch(new RegExp(`^\\S+Z\\s+lincoln-high\\s+alice\\s+session ended\\s+school-auth-cli \\(os user ${userInfo().username}\\)\\s+${String(sid2)}$`));
    expect(lines[5]).toMatch(/^\S+Z\s+lincoln-high\s+Mallory\s+sign-in refused: no such administrator\s+198\.51\.100\.23 curl\/8\.5\.0\s+-$/);
    expect(lines[6]).toMatch(/^\S+Z\s+lincoln-high\s+alice\s+sign-in refused: wrong password\s+198\.51\.100\.23 curl\/8\.5\.0\s+-$/);

    expect(ok(nothing).stdout).toBe('no events\n');
  });

  test('events --limit must be a whole number from 1 to 100000, checked before the database is opened', SLOW, async ({ ws }) => {
    const results = await Promise.all(['0', 'abc', '2.5', '100001'].map((limit) => ws.run(['events', '--limit', limit])));
    for (const result of results) {
      expect(result).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: --limit takes a whole number from 1 to 100000\n' });
    }
    expect(existsSync(ws.dataDir)).toBe(false);
  });
});

describe.concurrent('school-auth migrate', () => {
  test('migrate creates the SQLite file with every migration, then reports it is up to date', SLOW, async ({ ws }) => {
    const first = await ws.run(['migrate']);
    expect(first.code).toBe(0);
    expect(first.stderr).toBe('');
    expect(first.stdout).toMatch(/^applied: 001-initial(, [0-9]{3}-[a-z0-9-]+)*\n$/);
    expect(existsSync(join(ws.dataDir, 'school-auth.sqlite'))).toBe(true);

    const second = await ws.run(['migrate']);
    expect(second).toMatchObject({ code: 0, stdout: 'database is up to date\n', stderr: '' });
    // The service accepts the migrated database as ready.
    const app = await ws.app();
    expect((await app.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
  });
});
