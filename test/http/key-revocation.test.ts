import type { FastifyInstance } from 'fastify';
import { decodeProtectedHeader, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { revokeSigningKey } from '../../src/auth/keys/key-revocation.js';
import { createSigningKey, describeSigningKeys, SigningKeys } from '../../src/auth/keys/signing-keys.js';
import { UsageError } from '../../src/errors.js';
import { seedAdmin, signIn, useTestApps } from '../helpers/app.js';
import { auditEvents, me } from '../helpers/contract.js';
import { TEST_DIALECTS } from '../helpers/database.js';

async function publishedKids(app: FastifyInstance): Promise<string[]> {
  const { keys } = (await app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json<{ keys: JWK[] }>();
  return keys.map((key) => key.kid ?? '');
}

describe.each(TEST_DIALECTS)('keys revoke on %s (KEY_CACHE_SECONDS=10)', (dialect) => {
  const open = useTestApps(dialect);

  it('a new key signs at once; within KEY_CACHE_SECONDS the revoked key neither signs, nor verifies, nor is published', async () => {
    // KEY_ACTIVATION_DELAY=60 as in production: a revocation must not wait for it.
    const t = await open({ KEY_ACTIVATION_DELAY: '60' });
    const admin = await seedAdmin(t.services);
    const leaked = await signIn(t.app, admin);
    const leakedKid = decodeProtectedHeader(leaked.access_token).kid ?? '';

    const { revoked, replacement } = await revokeSigningKey(t.services, leakedKid);
    expect(revoked.kid).toBe(leakedKid);
    expect(replacement?.alg).toBe('ES256');
    const replacementKid = replacement?.kid ?? '';

    // An instance with no cache (a restart, or another instance reloading) signs with the new key now.
    const other = await buildApp({ ...t.services, keys: new SigningKeys(t.services.db, t.config, t.clock) });
    try {
      expect(decodeProtectedHeader((await signIn(other, admin)).access_token).kid).toBe(replacementKid);
      expect(await publishedKids(other)).toEqual([replacementKid]);
      expect((await me(other, leaked.access_token)).statusCode).toBe(401);
    } finally {
      await other.close();
    }

    // This instance's cache is at most KEY_CACHE_SECONDS old.
    t.clock.advance(10);
    expect(await publishedKids(t.app)).toEqual([replacementKid]);
    expect((await me(t.app, leaked.access_token)).statusCode).toBe(401);
    const after = await signIn(t.app, admin);
    expect(decodeProtectedHeader(after.access_token).kid).toBe(replacementKid);
    expect((await me(t.app, after.access_token)).statusCode).toBe(200);

    const states = await describeSigningKeys(t.services.db, t.config, t.clock);
    // Both keys may start in the same second, so their order is not part of the contract.
    expect(Object.fromEntries(states.map(({ row, state }) => [row.kid, state]))).toEqual({ [leakedKid]: 'revoked', [replacementKid]: 'active' });
    const [event] = await auditEvents(t, 'keys.revoked');
    expect(event?.detail).toBe(`key ${leakedKid} revoked; new key ${replacementKid} signs now`);
  });

  it('refuses an unknown or an already revoked kid, and leaves the signing key alone', async () => {
    const t = await open({ KEY_ACTIVATION_DELAY: '0' });
    const admin = await seedAdmin(t.services);
    const old = await signIn(t.app, admin);
    const oldKid = decodeProtectedHeader(old.access_token).kid ?? '';
    const { replacement: current } = await revokeSigningKey(t.services, oldKid);
    t.clock.advance(10);
    const currentToken = await signIn(t.app, admin);
    expect(decodeProtectedHeader(currentToken.access_token).kid).toBe(current?.kid);

    await expect(revokeSigningKey(t.services, oldKid)).rejects.toThrow(new UsageError(`signing key ${oldKid} is already revoked`));
    await expect(revokeSigningKey(t.services, 'no-such-kid')).rejects.toThrow(
      new UsageError('no signing key "no-such-kid"; see the kids with: school-auth keys list'),
    );
    expect((await me(t.app, currentToken.access_token)).statusCode).toBe(200);
  });
});

describe.each(TEST_DIALECTS)('keys revoke after a rotation on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('revoking the retiring key leaves the active one signing and withdraws only the revoked one', async () => {
    const t = await open({ KEY_ACTIVATION_DELAY: '0' });
    const admin = await seedAdmin(t.services);
    const oldToken = await signIn(t.app, admin);
    const oldKid = decodeProtectedHeader(oldToken.access_token).kid ?? '';
    t.clock.advance(1);
    const now = Math.floor(t.clock.now() / 1000);
    const rotated = await createSigningKey(t.services.db, 'ES256', now, now);
    t.clock.advance(10);
    expect((await publishedKids(t.app)).sort()).toEqual([oldKid, rotated.kid].sort());

    const { replacement } = await revokeSigningKey(t.services, oldKid);
    expect(replacement).toBeUndefined();
    t.clock.advance(10);
    expect(await publishedKids(t.app)).toEqual([rotated.kid]);
    expect((await me(t.app, oldToken.access_token)).statusCode).toBe(401);
    expect(decodeProtectedHeader((await signIn(t.app, admin)).access_token).kid).toBe(rotated.kid);
  });
});
