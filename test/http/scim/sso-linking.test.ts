import { describe, expect, it } from 'vitest';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { entraUser, scimClient, scimSchool } from '../../helpers/scim.js';
import { ALICE_AND_BOB, SCHOOL, idpClient, idpSuite, linkedAdmin, reachCallback, tokensThroughIdp, useIdp } from '../../helpers/sso.js';

// A SCIM-created admin has no password: in a school with an identity provider the directory's
// address is their waiting link (DESIGN.md §8), bound at their first verified sign-in. An address
// or identity of another admin is never moved to them.
describe.each(TEST_DIALECTS)('SCIM users and single sign-on (%s)', (dialect) => {
  const suite = idpSuite({ clients: [idpClient()], users: { ...ALICE_AND_BOB, 'carol-sub': { email: 'carol@district.example', email_verified: false } } });

  async function directory() {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp);
    const { token } = await scimSchool(suite.world.services, SCHOOL);
    return scimClient(suite.world.app, token);
  }

  /** Where the IdP's callback sends the front end: a code, or the error it names. */
  async function outcome(login: string): Promise<string> {
    const callback = await reachCallback(suite.world, login);
    return callback.location?.searchParams.has('code') === true ? 'signed in' : (callback.location?.searchParams.get('error') ?? `status ${callback.response.statusCode}`);
  }

  const link = (username: string) =>
    suite.world.services.db
      .selectFrom('sso_links')
      .innerJoin('admins', 'admins.id', 'sso_links.admin_id')
      .select(['sso_links.email', 'sso_links.subject'])
      .where('admins.username', '=', username)
      .executeTakeFirst();

  it('a created admin signs in through the IdP with the verified address the directory gave', async () => {
    const scim = await directory();
    const created = await scim.post('/Users', entraUser('alice@district.example'));
    expect(created.statusCode).toBe(201);
    expect(await link('alice@district.example')).toEqual({ email: 'alice@district.example', subject: null });
    const tokens = await tokensThroughIdp(suite.world, 'alice-sub');
    expect(tokens.access_token).toEqual(expect.any(String));
    expect(await link('alice@district.example')).toEqual({ email: null, subject: 'alice-sub' });
    const me = await suite.world.app.inject({ method: 'GET', url: '/admin/auth/me', headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(me.json<{ sub: string; amr: string[] }>()).toMatchObject({ sub: created.json<{ id: string }>().id, amr: expect.arrayContaining(['fed']) as unknown });
  });

  it('an unverified address at the IdP does not bind the link', async () => {
    const scim = await directory();
    expect((await scim.post('/Users', entraUser('carol@district.example'))).statusCode).toBe(201);
    expect(await outcome('carol-sub')).toBe('access_denied');
    expect(await link('carol@district.example')).toEqual({ email: 'carol@district.example', subject: null });
  });

  it("an address linked to another admin is refused with 409 uniqueness, and nothing is created", async () => {
    const scim = await directory();
    await linkedAdmin(suite.world, { email: 'bob@district.example' }, 'bob');
    const refused = await scim.post('/Users', entraUser('bobby', { emails: [{ value: 'bob@district.example', type: 'work', primary: true }] }));
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ status: '409', scimType: 'uniqueness' });
    expect(await suite.world.services.db.selectFrom('admins').select('id').where('username', '=', 'bobby').execute()).toEqual([]);
    expect(await link('bob')).toEqual({ email: 'bob@district.example', subject: null });
  });

  it('a bound link stays when the directory changes the address: only the IdP identity matches after binding', async () => {
    const scim = await directory();
    const id = (await scim.post('/Users', entraUser('alice@district.example'))).json<{ id: string }>().id;
    await tokensThroughIdp(suite.world, 'alice-sub');
    const changed = await scim.patch(`/Users/${id}`, [{ op: 'Replace', path: 'emails[type eq "work"].value', value: 'bob@district.example' }]);
    expect(changed.statusCode).toBe(200);
    expect(await link('alice@district.example')).toEqual({ email: null, subject: 'alice-sub' });
    // bob@ (the new address) signing in does not reach alice's account.
    expect(await outcome('bob-sub')).toBe('access_denied');
  });

  it("a waiting link follows the directory's new address", async () => {
    const scim = await directory();
    const id = (await scim.post('/Users', entraUser('alice@district.example'))).json<{ id: string }>().id;
    await scim.patch(`/Users/${id}`, [{ op: 'Replace', path: 'emails[type eq "work"].value', value: 'bob@district.example' }]);
    expect(await link('alice@district.example')).toEqual({ email: 'bob@district.example', subject: null });
    expect((await tokensThroughIdp(suite.world, 'bob-sub')).access_token).toEqual(expect.any(String));
  });
});
