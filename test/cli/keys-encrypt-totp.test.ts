import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { Secret, TOTP } from 'otpauth';
import { describe, expect } from 'vitest';
import type { InProcessApp } from '../helpers/cli-app.js';
import { cliTest as test, ok, parseJson, SLOW, type Workspace } from '../helpers/cli-workspace.js';
import { createPostgresDatabase, TEST_DIALECTS } from '../helpers/database.js';

const PASSWORD = 'correct horse battery staple';
const ALICE = { school_id: 'lincoln-high', username: 'alice', password: PASSWORD };
const BOB = { school_id: 'lincoln-high', username: 'bob', password: PASSWORD };
const SEALED = /^enc:v1:[A-Za-z0-9_-]+$/;

function writeKeyFile(ws: Workspace, name: string): string {
  const path = join(ws.root, name);
  writeFileSync(path, `${randomBytes(32).toString('base64')}\n`);
  chmodSync(path, 0o600);
  return path;
}

/** The code an authenticator app shows now (the in-process app and the CLI run on the system clock), `steps` steps away. */
function codeNow(secret: string, steps = 0): string {
  return new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + steps * 30_000 });
}

function post(app: InProcessApp, url: string, body: unknown, token?: string) {
  const authorization = token === undefined ? {} : { authorization: `Bearer ${token}` };
  return app.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...authorization }, payload: JSON.stringify(body) });
}

async function startTotp(app: InProcessApp, token: string): Promise<{ factor_id: string; secret: string }> {
  const started = await post(app, '/admin/auth/mfa/totp', {}, token);
  expect(started.statusCode, started.body).toBe(200);
  return started.json();
}

function storedFactors(app: InProcessApp) {
  return app.services.db.selectFrom('mfa_factors').select(['id', 'type', 'secret']).orderBy('id').execute();
}

describe.each(TEST_DIALECTS)('school-auth keys encrypt and TOTP secrets on %s', (dialect) => {
  test('seals every plaintext TOTP secret once, leaves other factors alone, and codes still verify', SLOW, async ({ ws }) => {
    const database = dialect === 'postgres' ? await createPostgresDatabase() : undefined;
    const env: Record<string, string> = database === undefined ? {} : { DATABASE_URL: database.url, ISSUER: 'https://auth.test' };
    const opened: InProcessApp[] = [];
    try {
      const app = await ws.openApp(env);
      opened.push(app);
      await app.seedSchool('lincoln-high');
      await app.seedAdmin('lincoln-high', 'alice', PASSWORD);
      await app.seedAdmin('lincoln-high', 'bob', PASSWORD);
      // Stored before a key file was configured: alice's confirmed factor, bob's pending enrollment.
      const aliceToken = (await app.signIn(ALICE)).access_token;
      const kid = decodeProtectedHeader(aliceToken).kid ?? '';
      const alice = await startTotp(app, aliceToken);
      expect((await post(app, '/admin/auth/mfa/totp/confirm', { factor_id: alice.factor_id, code: codeNow(alice.secret) }, aliceToken)).statusCode).toBe(200);
      const bob = await startTotp(app, (await app.signIn(BOB)).access_token);
      // A passkey has no secret: nothing to seal, and its row must stay as it is.
      const [aliceRow] = await app.services.db.selectFrom('mfa_factors').select('admin_id').where('id', '=', alice.factor_id).execute();
      const passkeyId = randomUUID();
      const now = Math.floor(Date.now() / 1000);
      await app.services.db
        .insertInto('mfa_factors')
        .values({ id: passkeyId, admin_id: aliceRow?.admin_id ?? '', type: 'webauthn', name: 'Passkey', secret: '', confirmed_at: now, created_at: now, last_used_at: null, last_used_step: null })
        .execute();
      expect((await storedFactors(app)).map(({ secret }) => secret).sort()).toEqual(['', alice.secret, bob.secret].sort());

      const keyFile = writeKeyFile(ws, 'kek');
      const withKey = { ...env, KEY_ENCRYPTION_KEY_FILE: keyFile };
      const first = ok(await ws.run(['keys', 'encrypt'], { env: withKey }));
      expect(first.stdout).toBe(
        `encrypted 1 signing key under ${keyFile}: ${kid}; sealed 2 TOTP secrets under ${keyFile}. Every instance must now start with this KEY_ENCRYPTION_KEY_FILE.\n`,
      );
      const sealed = await storedFactors(app);
      for (const row of sealed.filter(({ type }) => type === 'totp')) {
        expect(row.secret).toMatch(SEALED);
        expect(row.secret).not.toContain(alice.secret);
        expect(row.secret).not.toContain(bob.secret);
      }
      expect(sealed.filter(({ type }) => type === 'totp')).toHaveLength(2);
      expect(sealed.find(({ id }) => id === passkeyId)).toEqual({ id: passkeyId, type: 'webauthn', secret: '' });

      // Idempotent: a second run changes nothing, records nothing, and says so.
      expect(ok(await ws.run(['keys', 'encrypt'], { env: withKey })).stdout).toBe(
        `nothing to do: 1 signing key and 2 TOTP secrets already encrypted under ${keyFile}\n`,
      );
      expect(await storedFactors(app)).toEqual(sealed);
      const events = parseJson<{ type: string; detail: string | null }[]>(ok(await ws.run(['events', '--json'], { env })));
      expect(events.filter((event) => event.type === 'keys.encrypted').map((event) => event.detail).sort()).toEqual(
        [`private keys encrypted at rest: ${kid}`, 'TOTP secrets encrypted at rest: 2'].sort(),
      );
      expect(JSON.stringify(events)).not.toContain(alice.secret);

      // A secret an instance without the key file stored later is sealed by the next run; sealed ones are kept.
      await app.services.db.updateTable('mfa_factors').set({ secret: alice.secret }).where('id', '=', alice.factor_id).execute();
      expect(ok(await ws.run(['keys', 'encrypt'], { env: withKey })).stdout).toBe(
        `sealed 1 TOTP secret under ${keyFile}. Every instance must now start with this KEY_ENCRYPTION_KEY_FILE.\n`,
      );
      const resealed = await storedFactors(app);
      expect(resealed.find(({ id }) => id === alice.factor_id)?.secret).toMatch(SEALED);
      expect(resealed.filter(({ id }) => id !== alice.factor_id)).toEqual(sealed.filter(({ id }) => id !== alice.factor_id));

      // With the key file, both sealed secrets still work: alice signs in, bob confirms his enrollment.
      const fresh = await ws.openApp(withKey);
      opened.push(fresh);
      const challenge = await fresh.login(ALICE);
      expect(challenge.statusCode, challenge.body).toBe(403);
      const mfaToken = challenge.json<{ mfa_token: string }>().mfa_token;
      // One step ahead (drift allowed): the step of alice's confirmation code is spent.
      const verified = await post(fresh, '/admin/auth/mfa/verify', { mfa_token: mfaToken, method: 'totp', code: codeNow(alice.secret, 1) });
      expect(verified.statusCode, verified.body).toBe(200);
      const bobToken = (await fresh.signIn(BOB)).access_token;
      const confirmed = await post(fresh, '/admin/auth/mfa/totp/confirm', { factor_id: bob.factor_id, code: codeNow(bob.secret) }, bobToken);
      expect(confirmed.statusCode, confirmed.body).toBe(200);
    } finally {
      // The PostgreSQL database is dropped only once nothing holds a connection to it.
      await Promise.all(opened.map((app) => app.close()));
      await database?.drop();
    }
  });
});
