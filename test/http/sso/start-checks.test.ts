import { afterEach, describe, expect, it } from 'vitest';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { pkcePair } from '../../helpers/oidc-idp.js';
import { FRONT_END, SCHOOL, openSsoApp, startUrl, useIdp, type SsoApp } from '../../helpers/sso.js';
import type { TestIdp } from '../../helpers/oidc-idp.js';

/** Look-alikes of the registered http://localhost:5173/signed-in: none may be redirected to. */
const LOOK_ALIKES = [
  'http://localhost:5173/signed-in/',
  'http://localhost:5173/signed-in?next=/admin',
  'http://localhost:5173/signed-in#x',
  'http://localhost:5173/signed%2Din',
  'http://localhost:5173/%73igned-in',
  'http://localhost.:5173/signed-in',
  'http://LOCALHOST:5173/signed-in',
  'http://user@localhost:5173/signed-in',
  'http://localhost:5173@evil.example/signed-in',
  'http://localhost:5173\\@evil.example/signed-in',
  'http://localhost:5173\\signed-in',
  'https://localhost:5173/signed-in',
  'http://localhost:5174/signed-in',
  '//evil.example/signed-in',
  'https://evil.example/signed-in',
  '',
];

describe.each(TEST_DIALECTS)('GET /admin/auth/sso/{school_id}/start (%s)', (dialect) => {
  let world: SsoApp;
  afterEach(() => world.close());

  async function setUp() {
    world = await openSsoApp(dialect);
    // An IdP nobody needs to reach: these answers are decided before it is asked anything.
    await useIdp(world, { issuer: 'http://127.0.0.1:9' } as TestIdp);
  }

  it.each(LOOK_ALIKES)('redirect_uri %j is refused with 400 and no redirect', async (redirectUri) => {
    await setUp();
    const answer = await world.app.inject({ method: 'GET', url: startUrl(pkcePair().challenge, redirectUri) });
    expect(answer.statusCode).toBe(400);
    expect(answer.headers.location).toBeUndefined();
    expect(answer.json()).toEqual({ detail: 'redirect_uri is not one of the registered front-end addresses' });
  });

  it('a missing or repeated redirect_uri is refused', async () => {
    await setUp();
    const challenge = pkcePair().challenge;
    const missing = await world.app.inject({ method: 'GET', url: `/admin/auth/sso/${SCHOOL}/start?code_challenge=${challenge}` });
    const repeated = await world.app.inject({
      method: 'GET',
      url: `/admin/auth/sso/${SCHOOL}/start?redirect_uri=${encodeURIComponent(FRONT_END)}&redirect_uri=https://evil.example&code_challenge=${challenge}`,
    });
    expect([missing.statusCode, repeated.statusCode]).toEqual([400, 400]);
  });

  it.each(['', 'plain-verifier', 'x'.repeat(44), `${'a'.repeat(42)}=`])('code_challenge %j is refused', async (challenge) => {
    await setUp();
    const answer = await world.app.inject({ method: 'GET', url: startUrl(challenge) });
    expect(answer.statusCode).toBe(400);
    expect(answer.json()).toEqual({ detail: 'code_challenge must be a PKCE S256 challenge (43 base64url characters)' });
  });

  it('code_challenge_method other than S256 is refused', async () => {
    await setUp();
    const answer = await world.app.inject({ method: 'GET', url: `${startUrl(pkcePair().challenge)}&code_challenge_method=plain` });
    expect(answer.statusCode).toBe(400);
  });

  it('an unknown school and a school without SSO answer the same 404', async () => {
    await setUp();
    const { addSchool } = await import('../../../src/auth/accounts/schools.js');
    await addSchool(world.services, 'no-sso-school', undefined);
    for (const school of ['no-such-school', 'no-sso-school']) {
      const answer = await world.app.inject({ method: 'GET', url: startUrl(pkcePair().challenge, FRONT_END, school) });
      expect(answer.statusCode).toBe(404);
      expect(answer.json()).toEqual({ detail: 'Single sign-on is not set up for this school' });
    }
  });

  it('a second registered front end is accepted', async () => {
    await setUp();
    const answer = await world.app.inject({ method: 'GET', url: startUrl(pkcePair().challenge, 'http://localhost:5173/other') });
    // The IdP is unreachable: the documented redirect back to that front end.
    expect(answer.statusCode).toBe(302);
    expect(String(answer.headers.location)).toMatch(/^http:\/\/localhost:5173\/other\?error=temporarily_unavailable/);
  });
});
