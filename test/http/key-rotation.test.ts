import type { FastifyInstance } from 'fastify';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWK } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSigningKey } from '../../src/auth/keys/signing-keys.js';
import { createTestApp, seedAdmin, signIn, type TestApp } from '../helpers/app.js';
import { me, nowSeconds } from '../helpers/contract.js';
import { TEST_DIALECTS } from '../helpers/database.js';

const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

async function publishedKids(app: FastifyInstance): Promise<string[]> {
  const { keys } = (await app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json<{ keys: JWK[] }>();
  for (const key of keys) {
    for (const member of PRIVATE_JWK_MEMBERS) expect(key).not.toHaveProperty(member);
  }
  return keys.map((key) => key.kid!);
}

async function kidOfNewLogin(t: TestApp, admin: Awaited<ReturnType<typeof seedAdmin>>) {
  return decodeProtectedHeader((await signIn(t.app, admin)).access_token).kid;
}

describe.each(TEST_DIALECTS)('signing key rotation (KEY_CACHE_SECONDS=10) on %s', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({}, dialect);
  });
  afterEach(() => t.close());

  it('publishes a new key before it signs, and retires the old one after its tokens expired', async () => {
    const admin = await seedAdmin(t.services);
    const oldKid = await kidOfNewLogin(t, admin);
    // `keys rotate`: the new key signs 60 s from now.
    const created = await createSigningKey(t.services.db, 'ES256', nowSeconds(t), nowSeconds(t) + 60);

    // Published within KEY_CACHE_SECONDS, while the old key still signs.
    t.clock.advance(10);
    expect((await publishedKids(t.app)).sort()).toEqual([oldKid, created.kid].sort());
    expect(await kidOfNewLogin(t, admin)).toBe(oldKid);
    t.clock.advance(49);
    const lastOld = (await signIn(t.app, admin)).access_token;
    expect(decodeProtectedHeader(lastOld).kid).toBe(oldKid);

    // Signs once its activation time has come and the key cache has refreshed.
    t.clock.advance(11);
    const firstNew = (await signIn(t.app, admin)).access_token;
    expect(decodeProtectedHeader(firstNew).kid).toBe(created.kid);
    expect((await me(t.app, lastOld)).statusCode).toBe(200);
    expect((await me(t.app, firstNew)).statusCode).toBe(200);
    const { keys } = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json<{ keys: JWK[] }>();
    await jwtVerify(lastOld, createLocalJWKSet({ keys }), { currentDate: new Date(t.clock.now()) });
    await jwtVerify(firstNew, createLocalJWKSet({ keys }), { currentDate: new Date(t.clock.now()) });

    // Tokens of the old key keep verifying until they expire; the key stays published meanwhile.
    t.clock.advance(958 - 70);
    expect((await me(t.app, lastOld)).statusCode).toBe(200);
    t.clock.advance(1015 - 958);
    expect(await publishedKids(t.app)).toContain(oldKid);
    // Gone once 900 + 60 s have passed since the new key became active (+ the key cache).
    t.clock.advance(1031 - 1015);
    expect(await publishedKids(t.app)).toEqual([created.kid]);
    expect(await kidOfNewLogin(t, admin)).toBe(created.kid);
  });

  it('keeps a pending key out of signing for its whole delay', async () => {
    const admin = await seedAdmin(t.services);
    const oldKid = await kidOfNewLogin(t, admin);
    const created = await createSigningKey(t.services.db, 'ES256', nowSeconds(t), nowSeconds(t) + 3600);
    for (let elapsed = 0; elapsed < 3600; elapsed += 600) {
      expect(await kidOfNewLogin(t, admin), `at ${elapsed} s`).toBe(oldKid);
      t.clock.advance(600);
    }
    t.clock.advance(10);
    expect(await kidOfNewLogin(t, admin)).toBe(created.kid);
  });
});

describe.each(TEST_DIALECTS)('signing key rotation with KEY_CACHE_SECONDS=300 on %s', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ KEY_CACHE_SECONDS: '300' }, dialect);
  });
  afterEach(() => t.close());

  // A retired key stays published until every token it signed has expired (docs/keys.md). An
  // instance keeps signing with its cached (old) key for up to KEY_CACHE_SECONDS after the new key
  // became active, so the old key must stay published that much longer.
  it('keeps verifying a token the old key signed from its cache until that token expires', async () => {
    const admin = await seedAdmin(t.services);
    await signIn(t.app, admin); // loads the key cache
    await createSigningKey(t.services.db, 'ES256', nowSeconds(t), nowSeconds(t) + 60);
    t.clock.advance(299);
    // Today this is signed with the old key, still cached 239 s after the new one became active.
    const late = (await signIn(t.app, admin)).access_token;
    t.clock.advance(1100 - 299); // the token expires at +1199 s
    expect(await publishedKids(t.app)).toContain(decodeProtectedHeader(late).kid);
    expect((await me(t.app, late)).statusCode).toBe(200);
  });
});
