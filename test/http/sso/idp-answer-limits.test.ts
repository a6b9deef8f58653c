import { describe, expect, it } from 'vitest';
import { buildManagementApp } from '../../../src/http/management-app.js';
import { postJson } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { pkcePair, type IdpMode } from '../../helpers/oidc-idp.js';
import { parseExposition, valueOf } from '../../helpers/ops-prometheus.js';
import { FRONT_END, idpClient, idpSuite, linkedAdmin, reachCallback, signInThroughIdp, startUrl, useIdp, type SsoApp } from '../../helpers/sso.js';

const USERS = { 'alice-sub': { email: 'alice@district.example', email_verified: true } };

async function unavailableCount(world: SsoApp): Promise<number | undefined> {
  const management = await buildManagementApp(world.services, world.app);
  try {
    return valueOf(parseExposition((await management.inject({ method: 'GET', url: '/metrics' })).body), 'school_auth_sso_callbacks_total', { outcome: 'unavailable' });
  } finally {
    await management.close();
  }
}

function errorOf(location: unknown): string | null {
  const url = new URL(String(location));
  expect(`${url.origin}${url.pathname}`).toBe(FRONT_END);
  return url.searchParams.get('error');
}

// Every answer of an IdP is read through a byte limit (2 MiB answers here, over every limit).
describe.each(TEST_DIALECTS)('answers of an IdP are read up to a limit (%s)', (dialect) => {
  const suite = idpSuite({ clients: [idpClient()], users: USERS });

  async function setUp() {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp);
    await linkedAdmin(suite.world, { subject: 'alice-sub' });
  }

  it.each(['huge-discovery', 'huge-discovery-chunked'] as const)('start: a discovery document over the limit (%s) is temporarily_unavailable, and not kept', async (mode) => {
    await setUp();
    await suite.idp.setMode({ mode });
    const answer = await suite.world.app.inject({ method: 'GET', url: startUrl(pkcePair().challenge) });
    expect(answer.statusCode).toBe(302);
    expect(errorOf(answer.headers.location)).toBe('temporarily_unavailable');
    expect(await unavailableCount(suite.world)).toBe(1);
    await suite.idp.setMode({ mode: 'normal' });
    expect((await signInThroughIdp(suite.world, 'alice-sub')).statusCode).toBe(200);
  });

  it.each([['huge-token'], ['huge-jwks']] as [NonNullable<IdpMode['mode']>][])('callback: %s is temporarily_unavailable', async (mode) => {
    await setUp();
    const callback = await reachCallback(suite.world, 'alice-sub', { beforeCallback: () => suite.idp.setMode({ mode }) });
    expect(callback.response.statusCode).toBe(302);
    expect(errorOf(callback.response.headers.location)).toBe('temporarily_unavailable');
    const failure = await suite.world.services.db.selectFrom('events').select('detail').where('type', '=', 'sso.failure').executeTakeFirstOrThrow();
    expect(failure.detail).toBe('idp_unavailable');
  });

  it('back-channel logout: a key set over the limit refuses the token, and ends nothing', async () => {
    await setUp();
    const signedIn = (await signInThroughIdp(suite.world, 'alice-sub')).json<{ refresh_token: string }>();
    const token = await suite.idp.logoutToken({ aud: 'school-auth', sub: 'alice-sub' });
    await suite.idp.setMode({ mode: 'huge-jwks' });
    const answer = await suite.world.app.inject({
      method: 'POST',
      url: '/admin/auth/sso/backchannel-logout',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ logout_token: token }).toString(),
    });
    expect(answer.statusCode).toBe(400);
    expect((await postJson(suite.world.app, '/auth/refresh', { refresh_token: signedIn.refresh_token })).statusCode).toBe(200);
  });
});
