import { SignJWT, decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { seedAdmin, signIn, useTestApps } from '../helpers/app.js';
import { BODIES, me, nowSeconds, storedSigningKeys } from '../helpers/contract.js';

const TEN_YEARS = 10 * 365 * 86_400;

describe('/admin/auth/me and the configured access-token lifetime (ACCESS_TOKEN_TTL=900)', () => {
  const open = useTestApps('sqlite');

  it('refuses a token signed with the real key whose exp - iat exceeds ACCESS_TOKEN_TTL, from its first second', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const genuine = decodeJwt((await signIn(t.app, admin)).access_token);
    const [key] = await storedSigningKeys(t);
    if (key === undefined) throw new Error('no signing key');
    const forge = (lifetime: number) =>
      new SignJWT({ ...genuine, iat: nowSeconds(t), exp: nowSeconds(t) + lifetime })
        .setProtectedHeader({ alg: key.alg, typ: 'at+jwt', kid: key.kid })
        .sign(key.privateKey);

    const forged = await me(t.app, await forge(TEN_YEARS));
    expect(forged.statusCode).toBe(401);
    expect(forged.body).toBe(BODIES.invalidAccessToken);
    expect((await me(t.app, await forge(901))).statusCode).toBe(401);
    // The control: the same forgery with the configured lifetime is accepted, so the refusal is about it.
    expect((await me(t.app, await forge(900))).statusCode).toBe(200);
  });
});
