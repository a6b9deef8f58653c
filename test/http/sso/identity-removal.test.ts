import { describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { linkAdmin, unlinkAdmin } from '../../../src/auth/sso/links.js';
import { removeSso } from '../../../src/auth/sso/settings.js';
import { PASSWORD, postJson, signIn } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { ALICE_AND_BOB, SCHOOL, idpClient, idpSuite, openWithAliceAndBob, reachCallback, tokensThroughIdp, useIdp } from '../../helpers/sso.js';

const USERS = ALICE_AND_BOB;

// OWASP ASVS 5.0 V7.4.3: taking an identity away ends the sessions it started, at once.
describe.each(TEST_DIALECTS)('taking an identity away ends its sessions (%s)', (dialect) => {
  const suite = idpSuite({ clients: [idpClient()], users: USERS });

  const setUp = () => openWithAliceAndBob(suite, dialect);

  const federated = (login: string) => tokensThroughIdp(suite.world, login);

  async function passwordSession(username: string) {
    return signIn(suite.world.app, { schoolId: SCHOOL, username, password: PASSWORD });
  }

  async function refreshStatus(token: { refresh_token: string }) {
    return (await postJson(suite.world.app, '/auth/refresh', { refresh_token: token.refresh_token })).statusCode;
  }

  async function feed() {
    suite.world.clock.advance(2); // past the feed's cache of its unconditional answer
    return (await suite.world.app.inject({ method: 'GET', url: '/auth/revocations' })).json<{ sids: string[] }>().sids;
  }

  async function eventDetail(type: string) {
    return (await suite.world.services.db.selectFrom('events').select('detail').where('type', '=', type).orderBy('id', 'desc').executeTakeFirstOrThrow()).detail;
  }

  it('admin sso unlink ends the sessions that (iss, sub) signed in, not the admin password sessions', async () => {
    await setUp();
    const viaIdp = await federated('alice-sub');
    const withPassword = await passwordSession('alice');
    const bob = await federated('bob-sub');
    await unlinkAdmin(suite.world.services, { schoolId: SCHOOL, username: 'alice' });
    expect(await refreshStatus(viaIdp)).toBe(401);
    expect(await refreshStatus(withPassword)).toBe(200);
    expect(await refreshStatus(bob)).toBe(200);
    expect(await feed()).toEqual([decodeJwt(viaIdp.access_token).sid]);
    expect(await eventDetail('sso.unlinked')).toBe(`subject alice-sub at ${suite.idp.issuer}; 1 sessions ended`);
  });

  it('linking the admin to another identity ends the sessions of the one replaced', async () => {
    await setUp();
    const viaIdp = await federated('alice-sub');
    await linkAdmin(suite.world.services, { schoolId: SCHOOL, username: 'alice' }, { subject: 'alice-new-sub' });
    expect(await refreshStatus(viaIdp)).toBe(401);
    expect(await eventDetail('sso.linked')).toBe(`subject alice-new-sub at ${suite.idp.issuer}; 1 sessions ended`);
  });

  it('sso remove ends every session of the school signed in through the old issuer', async () => {
    await setUp();
    const alice = await federated('alice-sub');
    const bob = await federated('bob-sub');
    const withPassword = await passwordSession('alice');
    await removeSso(suite.world.services, SCHOOL);
    expect(await refreshStatus(alice)).toBe(401);
    expect(await refreshStatus(bob)).toBe(401);
    expect(await refreshStatus(withPassword)).toBe(200);
    expect((await feed()).sort()).toEqual([decodeJwt(alice.access_token).sid, decodeJwt(bob.access_token).sid].sort());
    expect(await eventDetail('sso.removed')).toBe(`${suite.idp.issuer}; 2 sessions ended`);
  });

  it('sso set with another issuer ends them; with the same issuer it ends nothing', async () => {
    await setUp();
    const alice = await federated('alice-sub');
    await useIdp(suite.world, suite.idp, { passwordLogin: 'on' });
    expect(await refreshStatus(alice)).toBe(200);
    expect(await eventDetail('sso.configured')).toBe(`oidc ${suite.idp.issuer}`);
    await useIdp(suite.world, suite.idp, { issuer: 'https://idp.other.example' });
    expect(await refreshStatus(alice)).toBe(401);
    expect(await eventDetail('sso.configured')).toBe(`oidc https://idp.other.example; replaces ${suite.idp.issuer}, 1 sessions ended`);
  });

  it('a sign-in in flight when the identity is unlinked starts no session', async () => {
    await setUp();
    const callback = await reachCallback(suite.world, 'alice-sub');
    const code = callback.location?.searchParams.get('code');
    expect(code).toEqual(expect.any(String));
    await unlinkAdmin(suite.world.services, { schoolId: SCHOOL, username: 'alice' });
    const exchange = await postJson(suite.world.app, '/admin/auth/sso/token', { code, code_verifier: callback.verifier });
    expect(exchange.statusCode).toBe(401);
    expect(await suite.world.services.db.selectFrom('sessions').select('id').execute()).toEqual([]);
  });

  it('a sign-in in flight when the school IdP is removed starts no session', async () => {
    await setUp();
    const callback = await reachCallback(suite.world, 'alice-sub');
    await removeSso(suite.world.services, SCHOOL);
    const exchange = await postJson(suite.world.app, '/admin/auth/sso/token', { code: callback.location?.searchParams.get('code'), code_verifier: callback.verifier });
    expect(exchange.statusCode).toBe(401);
    expect(await suite.world.services.db.selectFrom('sessions').select('id').execute()).toEqual([]);
  });
});
