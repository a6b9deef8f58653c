import { afterEach, describe, expect, it, vi } from 'vitest';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { TestIdp } from '../../helpers/oidc-idp.js';
import { idpClient, linkedAdmin, openSsoApp, signInThroughIdp, useIdp, type SsoApp } from '../../helpers/sso.js';

const USERS = { 'alice-sub': { email: 'alice@district.example', email_verified: true } };

describe.each(TEST_DIALECTS)("the IdP's key rotation (%s)", (dialect) => {
  const idps: TestIdp[] = [];
  let world: SsoApp;
  afterEach(async () => {
    vi.useRealTimers();
    await world.close();
    await Promise.all(idps.splice(0).map((idp) => idp.close()));
  });

  it('keeps signing in after the IdP replaces its signing key: the cached keys are refreshed for the new kid', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const first = await TestIdp.start({ clients: [idpClient()], users: USERS, kid: 'idp-key-1' });
    idps.push(first);
    world = await openSsoApp(dialect);
    await useIdp(world, first);
    await linkedAdmin(world, { subject: 'alice-sub' });
    expect((await signInThroughIdp(world, 'alice-sub')).statusCode).toBe(200);

    // The same IdP (same issuer, same port) comes back with a new key only.
    await first.close();
    const second = await TestIdp.start({ clients: [idpClient()], users: USERS, kid: 'idp-key-2', port: first.port });
    idps.push(second);
    expect(second.issuer).toBe(first.issuer);
    // openid-client fetches the keys again for an unknown kid once the cached set is a minute old
    // (its guard against an IdP, or a forger, making it fetch on every token); its clock is Date's.
    vi.setSystemTime(Date.now() + 61_000);
    world.clock.advance(61);
    expect((await signInThroughIdp(world, 'alice-sub')).statusCode).toBe(200);
  });
});
