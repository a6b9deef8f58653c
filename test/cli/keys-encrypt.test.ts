import { randomBytes } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { decodeProtectedHeader } from 'jose';
import { describe, expect } from 'vitest';
import { cliTest as test, ok, parseJson, SLOW, type Workspace } from '../helpers/cli-workspace.js';

const PASSWORD = 'correct horse battery staple';
const ALICE = { school_id: 'lincoln-high', username: 'alice', password: PASSWORD };

function writeKeyFile(ws: Workspace, name: string, mode = 0o600): string {
  const path = join(ws.root, name);
  writeFileSync(path, `${randomBytes(32).toString('base64')}\n`);
  chmodSync(path, mode);
  return path;
}

/** What the database file holds, read as a copy of it would be, without the service. */
function storedPrivateKeys(ws: Workspace): { kid: string; private_jwk: string }[] {
  const sqlite = new SQLite(join(ws.dataDir, 'school-auth.sqlite'), { readonly: true });
  try {
    return sqlite.prepare('select kid, private_jwk from signing_keys order by kid').all() as { kid: string; private_jwk: string }[];
  } finally {
    sqlite.close();
  }
}

describe.concurrent('school-auth keys encrypt', () => {
  test('encrypts the plaintext keys of an existing install once, records it, and the service then needs the key file', SLOW, async ({ ws }) => {
    const app = await ws.app();
    await app.seedSchool('lincoln-high');
    await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
    const before = await app.signIn(ALICE);
    const kid = decodeProtectedHeader(before.access_token).kid ?? '';
    const [plain] = storedPrivateKeys(ws);
    expect(plain?.private_jwk).toContain('"d"');

    const keyFile = writeKeyFile(ws, 'kek');
    const env = { KEY_ENCRYPTION_KEY_FILE: keyFile };
    expect(await ws.run(['keys', 'encrypt'])).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'school-auth: keys encrypt needs KEY_ENCRYPTION_KEY_FILE: set it to the key file the server reads\n',
    });
    const first = ok(await ws.run(['keys', 'encrypt'], { env }));
    expect(first.stdout).toBe(`encrypted 1 signing key under ${keyFile}: ${kid}. Every instance must now start with this KEY_ENCRYPTION_KEY_FILE.\n`);
    const [sealed] = storedPrivateKeys(ws);
    expect(sealed).toEqual({ kid, private_jwk: expect.stringMatching(/^enc:v1:[A-Za-z0-9_-]+$/) });
    expect(sealed?.private_jwk).not.toContain('"d"');

    // Idempotent: nothing changes, nothing more is recorded.
    expect(ok(await ws.run(['keys', 'encrypt'], { env })).stdout).toBe(`nothing to do: 1 signing key already encrypted under ${keyFile}\n`);
    expect(storedPrivateKeys(ws)).toEqual([sealed]);
    const events = parseJson<{ type: string; detail: string | null }[]>(ok(await ws.run(['events', '--json'])));
    expect(events.filter((event) => event.type === 'keys.encrypted')).toEqual([
      expect.objectContaining({ type: 'keys.encrypted', detail: `private keys encrypted at rest: ${kid}` }),
    ]);

    // With the key file, a fresh instance signs with the same key, and earlier tokens still verify.
    const fresh = await ws.openApp(env);
    const after = await fresh.signIn(ALICE);
    expect(decodeProtectedHeader(after.access_token).kid).toBe(kid);
    expect((await fresh.me(after.access_token)).statusCode).toBe(200);
    expect((await fresh.me(before.access_token)).statusCode).toBe(200);

    // Without it, or with another one, nothing starts and no key is added.
    const serve = await ws.run(['serve'], { env: { PORT: '0' } });
    expect(serve).toMatchObject({ code: 1, stdout: '' });
    expect(serve.stderr).toBe(`school-auth: signing key ${kid} is stored encrypted: set KEY_ENCRYPTION_KEY_FILE to the key file it was encrypted with\n`);
    const other = writeKeyFile(ws, 'other-kek');
    const rotate = await ws.run(['keys', 'rotate'], { env: { KEY_ENCRYPTION_KEY_FILE: other } });
    expect(rotate).toMatchObject({ code: 1, stdout: '' });
    expect(rotate.stderr).toMatch(new RegExp(`^school-auth: signing key ${kid} cannot be decrypted with KEY_ENCRYPTION_KEY_FILE ${other}: `));
    expect(storedPrivateKeys(ws)).toEqual([sealed]);
  });

  test('a key file other users can read stops every command, naming the variable and the fix', SLOW, async ({ ws }) => {
    const keyFile = writeKeyFile(ws, 'loose-kek', 0o644);
    const result = await ws.run(['keys', 'encrypt'], { env: { KEY_ENCRYPTION_KEY_FILE: keyFile } });
    expect(result).toMatchObject({
      code: 1,
      stdout: '',
      stderr: `school-auth: invalid configuration:\n  KEY_ENCRYPTION_KEY_FILE: ${keyFile} is accessible to other users (mode 644); restrict it with: chmod 600 ${keyFile}\n`,
    });
  });
});
