import { describe, expect, it } from 'vitest';
import { changePassword } from '../../../src/auth/accounts/admins.js';
import { PASSWORD, signIn, useTestApps } from '../../helpers/app.js';
import { BODIES, refresh } from '../../helpers/contract.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { LIST_SCHEMA, USER_SCHEMA, expectScimError, scimClient, scimJson, scimSchool, usersWhere, type ScimList, type ScimUser } from '../../helpers/scim.js';

/**
 * Okta's SCIM 2.0 client, request by request, as Okta's "SCIM 2.0 Protocol Reference" and "Build
 * a SCIM provisioning integration" document it: a filter with startIndex=1&count=100 before a
 * create, PUT for every profile update (AIW integrations; OIN ones too, but for activation), PATCH
 * with a path-less value object for (de)activation, never DELETE.
 */

const USER_NAME = 'test.user@okta.local';

/** Okta's create request with password sync turned off (as the docs tell districts to). */
function oktaCreate(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schemas: [USER_SCHEMA],
    userName: USER_NAME,
    name: { givenName: 'Test', familyName: 'User' },
    emails: [{ primary: true, value: USER_NAME, type: 'work' }],
    displayName: 'Test User',
    locale: 'en-US',
    externalId: '00ujl29u0le5T6Aj10h7',
    groups: [],
    active: true,
    ...extra,
  };
}

/** What Okta PUTs back: the resource it read, with its changes, `id`, `groups` and `meta` included. */
function oktaPut(current: ScimUser, changes: Record<string, unknown>): Record<string, unknown> {
  return { ...current, groups: [], meta: { resourceType: 'User' }, ...changes };
}

describe.each(TEST_DIALECTS)('Okta provisioning on %s', (dialect) => {
  const open = useTestApps(dialect);

  async function okta() {
    const t = await open();
    const school = await scimSchool(t.services);
    return { t, school, scim: scimClient(t.app, school.token) };
  }
  const lookup = usersWhere(`userName eq "${USER_NAME}"`, '&startIndex=1&count=100');

  it('Test Connection (startIndex=1&count=2) and the lookup before a create answer ListResponses with integers', async () => {
    const { scim } = await okta();
    expect(scimJson<ScimList>(await scim.get('/Users?startIndex=1&count=2'), 200)).toEqual({ schemas: [LIST_SCHEMA], totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] });
    expect(scimJson<ScimList>(await scim.get(lookup), 200)).toEqual({ schemas: [LIST_SCHEMA], totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] });
  });

  it('create: lookup, POST, lookup again finds it; a second POST of the same user answers 409', async () => {
    const { scim } = await okta();
    expect(scimJson<ScimList>(await scim.get(lookup), 200).totalResults).toBe(0);
    const created = scimJson(await scim.post('/Users', oktaCreate()), 201);
    expect(created).toMatchObject({
      schemas: [USER_SCHEMA],
      userName: USER_NAME,
      name: { givenName: 'Test', familyName: 'User' },
      emails: [{ primary: true, value: USER_NAME, type: 'work' }],
      displayName: 'Test User',
      locale: 'en-US',
      externalId: '00ujl29u0le5T6Aj10h7',
      active: true,
      meta: { resourceType: 'User' },
    });
    expect(created).not.toHaveProperty('password');
    const found = scimJson<ScimList>(await scim.get(lookup), 200);
    expect(found).toMatchObject({ totalResults: 1, startIndex: 1, itemsPerPage: 1 });
    expect(found.Resources).toEqual([created]);
    expectScimError(await scim.post('/Users', oktaCreate({ externalId: 'another-okta-id' })), 409, 'uniqueness');
  });

  it('a password in the POST (password sync on) is refused with 400 mutability and nothing is created', async () => {
    const { scim } = await okta();
    expectScimError(await scim.post('/Users', oktaCreate({ password: '1mz050nq' })), 400, 'mutability');
    expect(scimJson<ScimList>(await scim.get(lookup), 200).totalResults).toBe(0);
  });

  it('update: GET, then PUT of the whole resource with a changed name and address; the lookup by address follows', async () => {
    const { t, scim } = await okta();
    const created = scimJson(await scim.post('/Users', oktaCreate()), 201);
    t.clock.advance(300);
    const current = scimJson(await scim.get(`/Users/${created.id}`), 200);
    const emails = [{ primary: true, value: 'renamed.user@okta.local', type: 'work', display: 'renamed.user@okta.local' }];
    const updated = scimJson(await scim.put(`/Users/${created.id}`, oktaPut(current, { name: { givenName: 'Another', middleName: 'Excited', familyName: 'User' }, emails })), 200);
    expect(updated).toMatchObject({ id: created.id, userName: USER_NAME, name: { givenName: 'Another', middleName: 'Excited', familyName: 'User' }, emails, active: true });
    expect(updated.meta).toEqual({ ...created.meta, lastModified: new Date(t.clock.now()).toISOString() });
    expect(updated).not.toHaveProperty('groups');
    expect(scimJson(await scim.get(`/Users/${created.id}`), 200)).toEqual(updated);
    const byAddress = async (address: string) => scimJson<ScimList>(await scim.get(usersWhere(`emails.value eq "${address}"`)), 200).totalResults;
    expect(await byAddress('renamed.user@okta.local')).toBe(1);
    expect(await byAddress(USER_NAME)).toBe(0);
  });

  it('a password in a PUT is refused with 400 mutability and the resource stays as it was', async () => {
    const { scim } = await okta();
    const created = scimJson(await scim.post('/Users', oktaCreate()), 201);
    const body = oktaPut(created, { name: { givenName: 'Changed', familyName: 'User' }, password: 'n3wSecret!' });
    expectScimError(await scim.put(`/Users/${created.id}`, body), 400, 'mutability');
    expect(scimJson(await scim.get(`/Users/${created.id}`), 200)).toEqual(created);
  });

  it('deactivation by PATCH {"op":"replace","value":{"active":false}}, reactivation by the same with true', async () => {
    const { scim } = await okta();
    const { id } = scimJson(await scim.post('/Users', oktaCreate()), 201);
    const patchActive = async (active: boolean) => scimJson(await scim.patch(`/Users/${id}`, [{ op: 'replace', value: { active } }]), 200);

    const deactivated = await patchActive(false);
    expect(deactivated).toMatchObject({ id, userName: USER_NAME, active: false, name: { givenName: 'Test', familyName: 'User' } });
    expect(scimJson(await scim.get(`/Users/${id}`), 200).active).toBe(false);
    expect(scimJson<ScimList>(await scim.get(lookup), 200).Resources.map((user) => user.active)).toEqual([false]);
    expect((await patchActive(true)).active).toBe(true);
    expect(scimJson(await scim.get(`/Users/${id}`), 200).active).toBe(true);
  });

  it('deactivation and reactivation by PUT with "active" (AIW integrations), the rest of the resource kept', async () => {
    const { scim } = await okta();
    const created = scimJson(await scim.post('/Users', oktaCreate()), 201);
    const deactivated = scimJson(await scim.put(`/Users/${created.id}`, oktaPut(created, { active: false })), 200);
    expect(deactivated).toEqual({ ...created, active: false, meta: deactivated.meta });
    expect(scimJson<ScimList>(await scim.get(usersWhere('active eq false')), 200).Resources.map((user) => user.id)).toEqual([created.id]);
    const reactivated = scimJson(await scim.put(`/Users/${created.id}`, oktaPut(deactivated, { active: true })), 200);
    expect(reactivated).toEqual({ ...created, meta: reactivated.meta });
  });

  it('deactivation ends the admin\'s sessions at once; reactivation lets them sign in again', async () => {
    const { t, school, scim } = await okta();
    const { id } = scimJson(await scim.post('/Users', oktaCreate()), 201);
    const admin = { schoolId: school.schoolId, username: USER_NAME, password: PASSWORD };
    await changePassword(t.services, admin, PASSWORD);
    const session = await signIn(t.app, admin);
    expect((await refresh(t.app, session.refresh_token)).statusCode).toBe(200);

    scimJson(await scim.patch(`/Users/${id}`, [{ op: 'replace', value: { active: false } }]), 200);
    const refused = await refresh(t.app, session.refresh_token);
    expect(refused.statusCode).toBe(401);
    expect(refused.body).toBe(BODIES.invalidRefreshToken);
    await expect(signIn(t.app, admin)).rejects.toThrow(/login answered 40[13]/);

    scimJson(await scim.patch(`/Users/${id}`, [{ op: 'replace', value: { active: true } }]), 200);
    expect((await signIn(t.app, admin)).access_token).toEqual(expect.any(String));
  });

  it('import: pages of startIndex/count in one stable order until totalResults', async () => {
    const { t, scim } = await okta();
    const ids: string[] = [];
    for (let n = 0; n < 5; n += 1) {
      t.clock.advance(1);
      ids.push(scimJson(await scim.post('/Users', oktaCreate({ userName: `user${n}@okta.local`, externalId: `okta-${n}`, emails: [] })), 201).id);
    }
    const seen: string[] = [];
    for (let startIndex = 1; ; startIndex += 2) {
      const page = scimJson<ScimList>(await scim.get(`/Users?startIndex=${startIndex}&count=2`), 200);
      expect(page).toMatchObject({ totalResults: 5, startIndex, itemsPerPage: page.Resources.length });
      seen.push(...page.Resources.map((user) => user.id));
      if (startIndex + 2 > page.totalResults) break;
    }
    expect(seen).toEqual(ids);
  });
});
