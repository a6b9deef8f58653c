import { Secret, TOTP } from 'otpauth';
import { describe, expect } from 'vitest';
import type { InProcessApp } from '../helpers/cli-app.js';
import { cliTest as test, ISO_TIME, ok, parseJson, SLOW } from '../helpers/cli-workspace.js';

const PASSWORD = 'correct horse battery staple';
const NEW_PASSWORD = 'an entirely new passphrase 42';
const ALICE = { school_id: 'lincoln-high', username: 'alice', password: PASSWORD };
const ATTACKER = '203.0.113.66';

/** A TOTP factor enrolled by whoever holds `accessToken`, from `ip`; returns its id. */
async function enrollFrom(app: InProcessApp, accessToken: string, ip: string): Promise<string> {
  const post = (url: string, body: unknown) =>
    app.app.inject({ method: 'POST', url, remoteAddress: ip, headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  const { factor_id, secret } = (await post('/admin/auth/mfa/totp', {})).json<{ factor_id: string; secret: string }>();
  const code = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate();
  expect((await post('/admin/auth/mfa/totp/confirm', { factor_id, code })).statusCode).toBe(200);
  return factor_id;
}

describe.concurrent('school-auth admin passwd after a leaked password', () => {
  test('admin passwd lists the factors with when and from where each was enrolled, and says when to reset them', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    // Whoever held the leaked password signed in first and planted a factor.
    const session = await app.signIn(ALICE, { ip: ATTACKER });
    const factorId = await enrollFrom(app, session.access_token, ATTACKER);

    const passwd = ok(await ws.run(['admin', 'passwd', '--school', 'lincoln-high', '--username', 'alice', '--password-stdin'], { input: `${NEW_PASSWORD}\n` }));
    const lines = passwd.stdout.split('\n');
    expect(lines[0]).toBe('password changed; 1 session ended');
    expect(passwd.stdout).toMatch(/factor_id\s+type\s+name\s+created_at\s+enrolled_ip\s+last_used_at/);
    const row = lines.find((line) => line.startsWith(factorId));
    expect(row).toMatch(new RegExp(`^${factorId}\\s+totp\\s+Authenticator app\\s+\\d{4}-\\S+\\s+${ATTACKER.replaceAll('.', '\\.')}\\s+`));
    expect(passwd.stdout).toContain('school-auth admin mfa reset --school lincoln-high --username alice');

    const listed = parseJson<Array<Record<string, unknown>>>(ok(await ws.run(['admin', 'mfa', 'list', '--school', 'lincoln-high', '--username', 'alice', '--json'])));
    expect(listed).toEqual([
      { factor_id: factorId, type: 'totp', name: 'Authenticator app', created_at: expect.stringMatching(ISO_TIME), enrolled_ip: ATTACKER, last_used_at: expect.stringMatching(ISO_TIME) },
    ]);
    const text = ok(await ws.run(['admin', 'mfa', 'list', '--school', 'lincoln-high', '--username', 'alice']));
    expect(text.stdout).toContain(ATTACKER);
    expect(text.stdout).toContain('school-auth admin mfa reset --school lincoln-high --username alice');
  });

  test('school mfa required ends the password-only sessions of the school and says how many', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    const session = await app.signIn(ALICE);
    const set = await ws.run(['school', 'mfa', 'lincoln-high', 'required']);
    expect(set).toMatchObject({ code: 0, stdout: 'school "lincoln-high": second factor required; 1 password-only session ended\n', stderr: '' });
    expect((await app.refresh(session.refresh_token)).statusCode).toBe(401);
  });
});
