import { randomBytes } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { cliTest as test, ok, parseJson, SLOW, type Workspace } from '../helpers/cli-workspace.js';

const SECRET = 'idp-client-secret-4f1b9c';
const SEALED = /^enc:v1:[A-Za-z0-9_-]+$/;

function writeKeyFile(ws: Workspace): string {
  const path = join(ws.root, 'kek');
  writeFileSync(path, `${randomBytes(32).toString('base64')}\n`);
  chmodSync(path, 0o600);
  return path;
}

async function storedSecret(ws: Workspace, env: Record<string, string> = {}): Promise<string> {
  const app = await ws.openApp(env);
  try {
    return (await app.services.db.selectFrom('sso_settings').select('client_secret').executeTakeFirstOrThrow()).client_secret;
  } finally {
    await app.close();
  }
}

const SET_GOOGLE = ['sso', 'set', 'lincoln-high', '--provider', 'google', '--client-id', 'cid.apps.googleusercontent.com', '--client-secret-stdin', '--domains', 'District.example'];

describe('school-auth sso and admin sso', () => {
  test('set, show, list and remove; the client secret is never printed', SLOW, async ({ ws }) => {
    ok(await ws.run(['school', 'add', 'lincoln-high']));
    const set = ok(await ws.run(SET_GOOGLE, { input: `${SECRET}\n`, env: { PUBLIC_URL: 'https://auth.school.example' } }));
    expect(set.stdout).toContain('register this redirect URI at the IdP: https://auth.school.example/admin/auth/sso/callback');
    const shown = parseJson<Record<string, unknown>[]>(ok(await ws.run(['sso', 'show', 'lincoln-high', '--json'])));
    expect(shown[0]).toMatchObject({ provider: 'google', issuer: 'https://accounts.google.com', domains: 'district.example', password_login: 'on', trust_idp_mfa: false });
    const listed = parseJson<Record<string, unknown>[]>(ok(await ws.run(['school', 'list', '--json'])));
    expect(listed[0]?.sso).toBe('google');
    const text = ok(await ws.run(['sso', 'show', 'lincoln-high']));
    for (const output of [set, text]) expect(`${output.stdout}${output.stderr}`).not.toContain(SECRET);
    expect(await storedSecret(ws)).toBe(SECRET);
    ok(await ws.run(['sso', 'remove', 'lincoln-high']));
    const gone = await ws.run(['sso', 'show', 'lincoln-high']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/has no single sign-on/);
  });

  test('refuses settings a provider cannot work with, naming the option', SLOW, async ({ ws }) => {
    ok(await ws.run(['school', 'add', 'lincoln-high']));
    const cases: [string[], RegExp][] = [
      [['--provider', 'google'], /--domains is required for google/],
      [['--provider', 'microsoft', '--tenant', 'contoso'], /--tenant is required for microsoft/],
      [['--provider', 'clever'], /--district is required for clever/],
      [['--provider', 'oidc'], /--issuer is required for oidc/],
      [['--provider', 'oidc', '--issuer', 'http://idp.example'], /--issuer: expected an https URL/],
      [['--provider', 'saml'], /--provider: expected one of google, microsoft, clever, classlink, oidc/],
    ];
    for (const [options, message] of cases) {
      const result = await ws.run(['sso', 'set', 'lincoln-high', '--client-id', 'c', '--client-secret-stdin', ...options], { input: SECRET });
      expect(result.code, options.join(' ')).toBe(1);
      expect(result.stderr).toMatch(message);
    }
  });

  test('the client secret is sealed under KEY_ENCRYPTION_KEY_FILE, and keys encrypt seals one stored before', SLOW, async ({ ws }) => {
    ok(await ws.run(['school', 'add', 'lincoln-high']));
    ok(await ws.run(SET_GOOGLE, { input: SECRET }));
    expect(await storedSecret(ws)).toBe(SECRET);
    const keyFile = writeKeyFile(ws);
    const encrypted = ok(await ws.run(['keys', 'encrypt'], { env: { KEY_ENCRYPTION_KEY_FILE: keyFile } }));
    expect(encrypted.stdout).toContain('sealed 1 SSO client secret');
    expect(await storedSecret(ws, { KEY_ENCRYPTION_KEY_FILE: keyFile })).toMatch(SEALED);
    // Set again with the key file: stored sealed straight away, and shown with it.
    ok(await ws.run(SET_GOOGLE, { input: 'another-secret', env: { KEY_ENCRYPTION_KEY_FILE: keyFile } }));
    expect(await storedSecret(ws, { KEY_ENCRYPTION_KEY_FILE: keyFile })).toMatch(SEALED);
    ok(await ws.run(['sso', 'show', 'lincoln-high'], { env: { KEY_ENCRYPTION_KEY_FILE: keyFile } }));
  });

  test('admin sso link by email or subject, unlink, and SSO-only admins', SLOW, async ({ ws }) => {
    ok(await ws.run(['school', 'add', 'lincoln-high']));
    const early = await ws.run(['admin', 'add', '--school', 'lincoln-high', '--username', 'carol', '--sso-email', 'carol@district.example']);
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/has no single sign-on; set it first/);
    ok(await ws.run(SET_GOOGLE, { input: SECRET }));
    ok(await ws.run(['admin', 'add', '--school', 'lincoln-high', '--username', 'alice', '--password-stdin'], { input: 'correct horse battery staple' }));
    ok(await ws.run(['admin', 'add', '--school', 'lincoln-high', '--username', 'bob', '--password-stdin'], { input: 'correct horse battery staple' }));
    ok(await ws.run(['admin', 'sso', 'link', '--school', 'lincoln-high', '--username', 'alice', '--email', 'Alice@District.example']));
    ok(await ws.run(['admin', 'sso', 'link', '--school', 'lincoln-high', '--username', 'bob', '--subject', '1234567890']));
    const taken = await ws.run(['admin', 'sso', 'link', '--school', 'lincoln-high', '--username', 'alice', '--subject', '1234567890']);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/one identity, one admin/);
    const both = await ws.run(['admin', 'sso', 'link', '--school', 'lincoln-high', '--username', 'alice', '--subject', 'x', '--email', 'a@b.example']);
    expect(both.stderr).toMatch(/exactly one of --email or --subject/);
    ok(await ws.run(['admin', 'add', '--school', 'lincoln-high', '--username', 'carol', '--sso-email', 'carol@district.example']));

    const app = await ws.openApp();
    try {
      const links = await app.services.db.selectFrom('sso_links').innerJoin('admins', 'admins.id', 'sso_links.admin_id').select(['admins.username', 'email', 'issuer', 'subject']).orderBy('admins.username').execute();
      expect(links).toEqual([
        { username: 'alice', email: 'alice@district.example', issuer: null, subject: null },
        { username: 'bob', email: null, issuer: 'https://accounts.google.com', subject: '1234567890' },
        { username: 'carol', email: 'carol@district.example', issuer: null, subject: null },
      ]);
      // carol has no password: no password signs her in.
      const login = await app.app.inject({ method: 'POST', url: '/admin/auth/login', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ school_id: 'lincoln-high', username: 'carol', password: '!sso-only' }) });
      expect(login.statusCode).toBe(401);
    } finally {
      await app.close();
    }
    ok(await ws.run(['admin', 'sso', 'unlink', '--school', 'lincoln-high', '--username', 'bob']));
    const again = await ws.run(['admin', 'sso', 'unlink', '--school', 'lincoln-high', '--username', 'bob']);
    expect(again.stderr).toMatch(/has no single sign-on link/);
  });
});
