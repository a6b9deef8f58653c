import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JWK } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { createSigningKey } from '../../src/auth/keys/signing-keys.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { REPO_ROOT } from '../helpers/cli-run.js';
import { nowSeconds } from '../helpers/contract.js';

// What the docs promise about `keys rotate` (the README's command table, docs/keys.md in full) is
// what operators plan a rotation by: it must match what a running instance does and what it
// tells caches.

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const KEYS_DOC = readFileSync(join(REPO_ROOT, 'docs', 'keys.md'), 'utf8');
const KEY_ROTATION = /\*\*Key rotation\.\*\*([\s\S]*?)\n\n/.exec(KEYS_DOC)?.[1] ?? '';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function jwks(app: TestApp['app']): Promise<{ kids: string[]; cacheControl: string }> {
  const response = await app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
  return { kids: response.json<{ keys: JWK[] }>().keys.map((key) => key.kid!), cacheControl: String(response.headers['cache-control']) };
}

describe('the docs on key rotation', () => {
  it('have a Key rotation paragraph, linked from the README', () => {
    expect(KEY_ROTATION).not.toBe('');
    expect(README).toContain('](docs/keys.md)');
  });

  it('never say `keys rotate` publishes the key at once', () => {
    for (const text of [README, KEYS_DOC]) expect(text).not.toMatch(/keys rotate`?\s+publishes a new key[^.;]*at once/);
  });

  it('the README says when a rotated key appears and when it signs', () => {
    const row = README.split('\n').find((line) => line.startsWith('| `school-auth keys rotate`')) ?? '';
    expect(row).toMatch(/within `KEY_CACHE_SECONDS`/);
    expect(row).toMatch(/after `KEY_ACTIVATION_DELAY`/);
  });

  it('a running instance shows a rotated key only once its key cache expires, as docs/keys.md says', async () => {
    t = await createTestApp({ KEY_CACHE_SECONDS: '10' });
    const before = await jwks(t.app);
    // What `keys rotate` does: a new key in the shared database, signing KEY_ACTIVATION_DELAY later.
    const rotated = await createSigningKey(t.services.db, 'ES256', nowSeconds(t), nowSeconds(t) + 60);
    t.clock.advance(9.9);
    expect((await jwks(t.app)).kids).toEqual(before.kids);
    t.clock.advance(0.1);
    expect((await jwks(t.app)).kids).toContain(rotated.kid);
    expect(KEY_ROTATION).toMatch(/within\s+`KEY_CACHE_SECONDS`/);
  });

  it('names the max-age the JWKS is served with, so operators can add it to the delay', async () => {
    t = await createTestApp();
    const maxAge = /max-age=(\d+)/.exec((await jwks(t.app)).cacheControl)?.[1];
    expect(maxAge).toBeDefined();
    expect(KEY_ROTATION).toContain(`max-age=${maxAge}`);
  });
});
