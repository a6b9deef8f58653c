import { Secret, TOTP } from 'otpauth';
import { describe, expect } from 'vitest';
import type { InProcessApp } from '../helpers/cli-app.js';
import { cliTest as test, ISO_TIME, ok, parseJson, SLOW } from '../helpers/cli-workspace.js';

const PASSWORD = 'correct horse battery staple';
const ALICE = { school_id: 'lincoln-high', username: 'alice', password: PASSWORD };

function postWithBearer(app: InProcessApp, url: string, token: string, body: unknown = {}) {
  return app.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
}

describe.concurrent('school-auth second-factor commands', () => {
  test('school mfa sets the policy that school list shows and login applies; a bad policy is refused', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    expect(parseJson<Array<{ mfa_policy: string }>>(ok(await ws.run(['school', 'list', '--json'])))[0]?.mfa_policy).toBe('optional');

    const set = await ws.run(['school', 'mfa', 'LINCOLN-HIGH', 'required']);
    expect(set).toMatchObject({ code: 0, stdout: 'school "LINCOLN-HIGH": second factor required; 0 password-only sessions ended\n', stderr: '' });
    const table = ok(await ws.run(['school', 'list']));
    expect(table.stdout.split('\n')[0]).toMatch(/^school_id\s+name\s+status\s+mfa_policy\s+passkeys\s+password_recovery\s+sso\s+created_at$/);
    expect(table.stdout.split('\n')[1]).toMatch(/^lincoln-high\s+lincoln-high\s+active\s+required\s+allowed\s+on\s+\S+\s+\d{4}-/);

    const login = await app.login(ALICE);
    expect(login.statusCode).toBe(403);
    expect(login.json()).toMatchObject({ detail: 'Second factor enrollment required', mfa_methods: [] });

    const bad = await ws.run(['school', 'mfa', 'lincoln-high', 'sometimes']);
    expect(bad).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: the policy must be "optional" or "required", not "sometimes"\n' });
    const ghost = await ws.run(['school', 'mfa', 'ghost', 'required']);
    expect(ghost.code).toBe(1);
  });

  test('school passkeys sets the policy that school list shows and records it; a bad policy is refused', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    expect(parseJson<Array<{ passkeys: string }>>(ok(await ws.run(['school', 'list', '--json'])))[0]?.passkeys).toBe('allowed');

    expect(await ws.run(['school', 'passkeys', 'LINCOLN-HIGH', 'off'])).toMatchObject({ code: 0, stdout: 'school "LINCOLN-HIGH": passkey sign-in off\n', stderr: '' });
    expect(parseJson<Array<{ passkeys: string }>>(ok(await ws.run(['school', 'list', '--json'])))[0]?.passkeys).toBe('off');
    const required = await ws.run(['school', 'passkeys', 'lincoln-high', 'required']);
    expect(required).toMatchObject({ code: 0, stdout: 'school "lincoln-high": passkey sign-in required; 0 password sessions of passkey holders ended\n' });
    const events = await app.services.db.selectFrom('events').select('detail').where('type', '=', 'school.passkey_policy').orderBy('id').execute();
    expect(events.map((event) => event.detail)).toEqual(['off', 'required; 0 password sessions of passkey holders ended']);

    const bad = await ws.run(['school', 'passkeys', 'lincoln-high', 'sometimes']);
    expect(bad).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: the policy must be "allowed", "required" or "off", not "sometimes"\n' });
    expect((await ws.run(['school', 'passkeys', 'ghost', 'off'])).code).toBe(1);
  });

  test('admin mfa list shows the factors without their secrets; admin mfa reset removes them and ends the sessions', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    const empty = ok(await ws.run(['admin', 'mfa', 'list', '--school', 'lincoln-high', '--username', 'alice']));
    expect(empty.stdout).toBe('no second factor\n0 recovery codes left\n');

    const session = await app.signIn(ALICE);
    const started = await postWithBearer(app, '/admin/auth/mfa/totp', session.access_token);
    const { factor_id, secret } = started.json<{ factor_id: string; secret: string }>();
    const code = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate();
    expect((await postWithBearer(app, '/admin/auth/mfa/totp/confirm', session.access_token, { factor_id, code })).statusCode).toBe(200);

    const listed = await ws.run(['admin', 'mfa', 'list', '--school', 'lincoln-high', '--username', 'ALICE', '--json']);
    const rows = parseJson<Array<Record<string, unknown>>>(ok(listed));
    expect(rows).toEqual([
      { factor_id, type: 'totp', name: 'Authenticator app', created_at: expect.stringMatching(ISO_TIME), enrolled_ip: '127.0.0.1', last_used_at: expect.stringMatching(ISO_TIME) },
    ]);
    expect(listed.stdout).not.toContain(secret);
    const text = ok(await ws.run(['admin', 'mfa', 'list', '--school', 'lincoln-high', '--username', 'alice']));
    expect(text.stdout).toContain('10 recovery codes left');

    expect((await app.login(ALICE)).statusCode).toBe(403);
    const reset = await ws.run(['admin', 'mfa', 'reset', '--school', 'lincoln-high', '--username', 'alice']);
    expect(reset).toMatchObject({ code: 0, stdout: 'second factor reset: 1 factor removed; 1 session ended\n', stderr: '' });
    expect((await app.me(session.access_token)).statusCode).toBe(401);
    expect((await app.login(ALICE)).statusCode).toBe(200);

    const events = parseJson<Array<{ type: string; detail: string | null }>>(ok(await ws.run(['events', '--school', 'lincoln-high', '--json'])));
    expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(['mfa.enrolled', 'mfa.challenged', 'mfa.reset']));
    for (const event of events) expect(JSON.stringify(event)).not.toContain(secret);
  });
});
