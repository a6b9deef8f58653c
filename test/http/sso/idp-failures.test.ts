import { describe, expect, it } from 'vitest';
import { buildManagementApp } from '../../../src/http/management-app.js';
import { CALLBACK_FAILURE_LIMIT } from '../../../src/auth/sso/callback.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { type TestIdp, pkcePair } from '../../helpers/oidc-idp.js';
import { parseExposition, valueOf } from '../../helpers/ops-prometheus.js';
import { freePort } from '../../helpers/free-port.js';
import { FRONT_END, idpClient, linkedAdmin, reachCallback, startUrl, useIdp, type SsoApp, idpSuite } from '../../helpers/sso.js';

const USERS = { 'alice-sub': { email: 'alice@district.example', email_verified: true } };

async function scrape(world: SsoApp) {
  const management = await buildManagementApp(world.services, world.app);
  try {
    return parseExposition((await management.inject({ method: 'GET', url: '/metrics' })).body);
  } finally {
    await management.close();
  }
}

function expectUnavailable(location: string | string[] | undefined) {
  const url = new URL(String(location));
  expect(`${url.origin}${url.pathname}`).toBe(FRONT_END);
  expect(url.searchParams.get('error')).toBe('temporarily_unavailable');
  expect(url.searchParams.get('error_description')).toBeTruthy();
}

describe.each(TEST_DIALECTS)('an IdP that is down, slow or wrong (%s)', (dialect) => {
  const suite = idpSuite({ clients: [idpClient()], users: USERS });

  async function setUp() {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp);
    await linkedAdmin(suite.world, { subject: 'alice-sub' });
  }

  const start = () => suite.world.app.inject({ method: 'GET', url: startUrl(pkcePair().challenge) });

  it('start: a discovery that times out is answered with the documented redirect, not a hang', async () => {
    await setUp();
    await suite.idp.setMode({ mode: 'hang' });
    const began = Date.now();
    const answer = await start();
    expect(answer.statusCode).toBe(302);
    expectUnavailable(answer.headers.location);
    expect(Date.now() - began).toBeLessThan(9000);
    expect(valueOf(await scrape(suite.world), 'school_auth_sso_callbacks_total', { outcome: 'unavailable' })).toBe(1);
  }, 20_000);

  it.each(['error500', 'wrong-issuer'] as const)('start: discovery answering %s', async (mode) => {
    await setUp();
    await suite.idp.setMode({ mode });
    const answer = await start();
    expect(answer.statusCode).toBe(302);
    expectUnavailable(answer.headers.location);
  });

  it('start: an IdP that went down after its discovery was cached is noticed within a minute of its last answer', async () => {
    await setUp();
    expect(new URL(String((await start()).headers.location)).origin).toBe(suite.idp.issuer);
    await suite.idp.setMode({ mode: 'error500' });
    // Within the minute the cached document is trusted: the browser goes to the IdP.
    suite.world.clock.advance(30);
    expect(new URL(String((await start()).headers.location)).origin).toBe(suite.idp.issuer);
    // Past it, the discovery is fetched again before redirecting, and its failure is said.
    suite.world.clock.advance(31);
    const answer = await start();
    expectUnavailable(answer.headers.location);
    await suite.idp.setMode({ mode: 'normal' });
    expect(new URL(String((await start()).headers.location)).origin).toBe(suite.idp.issuer);
  });

  it('start: an IdP nobody listens for', async () => {
    await suite.open(dialect);
    await useIdp(suite.world, { issuer: `http://127.0.0.1:${await freePort()}` } as TestIdp);
    const answer = await start();
    expect(answer.statusCode).toBe(302);
    expectUnavailable(answer.headers.location);
  });

  it.each(['error500', 'hang'] as const)('callback: a token endpoint answering %s', async (mode) => {
    await setUp();
    const callback = await reachCallback(suite.world, 'alice-sub', { beforeCallback: () => suite.idp.setMode({ mode }) });
    expect(callback.response.statusCode).toBe(302);
    expectUnavailable(callback.response.headers.location);
    const failure = await suite.world.services.db.selectFrom('events').select('detail').where('type', '=', 'sso.failure').executeTakeFirstOrThrow();
    expect(failure.detail).toBe('idp_unavailable');
  }, 20_000);

  it('an http issuer is refused unless SSO_ALLOW_HTTP_LOOPBACK is on', async () => {
    await suite.open(dialect, { SSO_ALLOW_HTTP_LOOPBACK: 'off' });
    await useIdp(suite.world, suite.idp);
    const answer = await start();
    expectUnavailable(answer.headers.location);
  });

  it('throttles failed callbacks per client IP', async () => {
    await setUp();
    for (let attempt = 0; attempt < CALLBACK_FAILURE_LIMIT; attempt += 1) {
      expect((await suite.world.app.inject({ method: 'GET', url: '/admin/auth/sso/callback?code=x&state=forged' })).statusCode).toBe(400);
    }
    const throttled = await suite.world.app.inject({ method: 'GET', url: '/admin/auth/sso/callback?code=x&state=forged' });
    expect(throttled.statusCode).toBe(429);
    expect(throttled.json()).toEqual({ detail: 'Too many failed sign-ins. Try again later.' });
    expect(throttled.headers['retry-after']).toBe('600');
    // Another address is not affected; the window ends.
    const elsewhere = await suite.world.app.inject({ method: 'GET', url: '/admin/auth/sso/callback?code=x&state=forged', remoteAddress: '10.0.0.9' });
    expect(elsewhere.statusCode).toBe(400);
    suite.world.clock.advance(601);
    expect((await suite.world.app.inject({ method: 'GET', url: '/admin/auth/sso/callback?code=x&state=forged' })).statusCode).toBe(400);
  });
});
