import { userInfo } from 'node:os';
import { decodeProtectedHeader } from 'jose';
import { describe, expect } from 'vitest';
import { cliTest as test, ok, parseJson, SLOW } from '../helpers/cli-workspace.js';

const PASSWORD = 'correct horse battery staple';
const ALICE = { school_id: 'lincoln-high', username: 'alice', password: PASSWORD };

const REVOKED = /^key (\S+) revoked: every instance stops signing with it, accepting its tokens and publishing it within KEY_CACHE_SECONDS \(10 s\)\. New ES256 key (\S+) signs now\.\n$/;

describe.concurrent('school-auth keys revoke', () => {
  test('withdraws the signing key at once: a new key signs, the old one leaves the JWKS and its tokens are refused; it is audited', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    const leaked = await app.signIn(ALICE);
    const leakedKid = decodeProtectedHeader(leaked.access_token).kid ?? '';

    const revoke = await ws.run(['keys', 'revoke', leakedKid]);
    expect(revoke.stderr).toBe('');
    const [, revokedKid, newKid] = REVOKED.exec(ok(revoke).stdout) ?? [];
    expect(revokedKid).toBe(leakedKid);
    expect(newKid).toBeDefined();

    const keys = parseJson<{ kid: string; state: string }[]>(ok(await ws.run(['keys', 'list', '--json'])));
    expect(Object.fromEntries(keys.map(({ kid, state }) => [kid, state]))).toEqual({ [leakedKid]: 'revoked', [newKid ?? '']: 'active' });

    // A fresh instance (what every instance is once its KEY_CACHE_SECONDS cache expires).
    const fresh = await ws.openApp();
    const jwks = (await fresh.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json<{ keys: { kid: string }[] }>();
    expect(jwks.keys.map((key) => key.kid)).toEqual([newKid]);
    expect((await fresh.me(leaked.access_token)).statusCode).toBe(401);
    expect(decodeProtectedHeader((await fresh.signIn(ALICE)).access_token).kid).toBe(newKid);

    const events = parseJson<{ type: string; detail: string | null; user_agent: string | null }[]>(ok(await ws.run(['events', '--json', '--limit', '3'])));
    expect(events.find((event) => event.type === 'keys.revoked')).toMatchObject({
      detail: `key ${leakedKid} revoked; new key ${newKid ?? ''} signs now`,
      // Who ran the command: the operating-system user, since the CLI has no login of its own.
      user_agent: `school-auth-cli (os user ${userInfo().username})`,
    });

    const again = await ws.run(['keys', 'revoke', leakedKid]);
    expect(again).toMatchObject({ code: 1, stdout: '', stderr: `school-auth: signing key ${leakedKid} is already revoked\n` });
    const unknown = await ws.run(['keys', 'revoke', 'no-such-kid']);
    expect(unknown).toMatchObject({ code: 1, stdout: '', stderr: 'school-auth: no signing key "no-such-kid"; see the kids with: school-auth keys list\n' });
  });
});
