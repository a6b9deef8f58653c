import { describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { prune } from '../../../src/auth/housekeeping.js';
import { postJson } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { ALICE_AND_BOB, idpClient, idpSuite, openWithAliceAndBob, tokensThroughIdp } from '../../helpers/sso.js';

const USERS = ALICE_AND_BOB;

describe.each(TEST_DIALECTS)('back-channel logout (%s)', (dialect) => {
  const suite = idpSuite({ clients: [idpClient()], users: USERS });

  const setUp = () => openWithAliceAndBob(suite, dialect);

  const signedIn = (login: string) => tokensThroughIdp(suite.world, login);

  function deliver(token: string) {
    return suite.world.app.inject({
      method: 'POST',
      url: '/admin/auth/sso/backchannel-logout',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ logout_token: token }).toString(),
    });
  }

  it("ends the sessions of that (iss, sub) only, and they reach the revocation feed", async () => {
    await setUp();
    const alice = await signedIn('alice-sub');
    const bob = await signedIn('bob-sub');
    const answer = await deliver(await suite.idp.logoutToken({ aud: 'school-auth', sub: 'alice-sub' }));
    expect(answer.statusCode).toBe(200);
    expect((await postJson(suite.world.app, '/auth/refresh', { refresh_token: alice.refresh_token })).statusCode).toBe(401);
    expect((await postJson(suite.world.app, '/auth/refresh', { refresh_token: bob.refresh_token })).statusCode).toBe(200);
    suite.world.clock.advance(2); // past the feed's cache of its unconditional answer
    const feed = await suite.world.app.inject({ method: 'GET', url: '/auth/revocations' });
    expect(feed.json<{ sids: string[] }>().sids).toEqual([decodeJwt(alice.access_token).sid]);
    const events = await suite.world.services.db.selectFrom('events').select('detail').where('type', '=', 'sso.logout').execute();
    expect(events).toEqual([{ detail: '1 sessions ended' }]);
  });

  it('ends the sessions of an IdP session named by sid', async () => {
    await setUp();
    const alice = await signedIn('alice-sub');
    const session = await suite.world.services.db.selectFrom('sessions').select('sso_session').where('id', '=', String(decodeJwt(alice.access_token).sid)).executeTakeFirstOrThrow();
    expect(session.sso_session).toEqual(expect.any(String));
    expect((await deliver(await suite.idp.logoutToken({ aud: 'school-auth', sid: session.sso_session }))).statusCode).toBe(200);
    expect((await postJson(suite.world.app, '/auth/refresh', { refresh_token: alice.refresh_token })).statusCode).toBe(401);
  });

  it.each([
    ['another audience', { aud: 'another-client', sub: 'alice-sub' }, {}],
    ['no logout event', { aud: 'school-auth', sub: 'alice-sub', events: {} }, {}],
    ['a nonce', { aud: 'school-auth', sub: 'alice-sub', nonce: 'n' }, {}],
    ['neither sub nor sid', { aud: 'school-auth' }, {}],
    ['too old', { aud: 'school-auth', sub: 'alice-sub', iat: Math.floor(Date.now() / 1000) - 3600 }, {}],
    ['no jti', { aud: 'school-auth', sub: 'alice-sub', jti: null }, {}],
    ['no exp', { aud: 'school-auth', sub: 'alice-sub', exp: null }, {}],
    ['an expired exp', { aud: 'school-auth', sub: 'alice-sub', exp: Math.floor(Date.now() / 1000) - 120 }, {}],
    ['alg none', { aud: 'school-auth', sub: 'alice-sub' }, { alg: 'none' }],
    ['HMAC with the client secret', { aud: 'school-auth', sub: 'alice-sub' }, { alg: 'HS256', secret: 'school-auth-secret' }],
  ] as const)('refuses a logout token with %s, ending nothing', async (_name, claims, options) => {
    await setUp();
    const alice = await signedIn('alice-sub');
    const answer = await deliver(await suite.idp.logoutToken(claims, options));
    expect(answer.statusCode).toBe(400);
    expect(answer.json()).toEqual({ detail: 'Invalid logout token' });
    expect((await postJson(suite.world.app, '/auth/refresh', { refresh_token: alice.refresh_token })).statusCode).toBe(200);
  });

  it('refuses a token replayed within its window: the sessions signed in since stay', async () => {
    await setUp();
    await signedIn('alice-sub');
    const token = await suite.idp.logoutToken({ aud: 'school-auth', sub: 'alice-sub' });
    expect((await deliver(token)).statusCode).toBe(200);
    const again = await signedIn('alice-sub');
    suite.world.clock.advance(100);
    const replayed = await deliver(token);
    expect(replayed.statusCode).toBe(400);
    expect((await postJson(suite.world.app, '/auth/refresh', { refresh_token: again.refresh_token })).statusCode).toBe(200);
    const events = await suite.world.services.db.selectFrom('events').select('detail').where('type', '=', 'sso.logout').execute();
    expect(events).toEqual([{ detail: '1 sessions ended' }]);
  });

  it('another token with its own jti is accepted, and remembered ones are forgotten once their window is over', async () => {
    await setUp();
    expect((await deliver(await suite.idp.logoutToken({ aud: 'school-auth', sub: 'alice-sub' }))).statusCode).toBe(200);
    expect((await deliver(await suite.idp.logoutToken({ aud: 'school-auth', sub: 'bob-sub' }))).statusCode).toBe(200);
    const remembered = () => suite.world.services.db.selectFrom('sso_logout_tokens').select('expires_at').execute();
    expect(await remembered()).toHaveLength(2);
    suite.world.clock.advance(400); // past iat + 300 s + 60 s of clock skew: neither could be accepted again
    expect(await prune(suite.world.services, { sessionDays: 30 })).toMatchObject({ ssoRows: 2 });
    expect(await remembered()).toEqual([]);
  });

  it('refuses a missing token', async () => {
    await setUp();
    const answer = await suite.world.app.inject({ method: 'POST', url: '/admin/auth/sso/backchannel-logout', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
    expect(answer.statusCode).toBe(400);
  });
});
