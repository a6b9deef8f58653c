import { describe, expect, it } from 'vitest';
import { useTestApps } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import {
  ENTERPRISE_SCHEMA,
  LIST_SCHEMA,
  USER_SCHEMA,
  entraUser,
  expectScimError,
  scimClient,
  scimJson,
  scimSchool,
  usersWhere,
  type ScimList,
} from '../../helpers/scim.js';

/** RFC 7644's own rules and examples (sections 3.3 to 3.12), and RFC 7643's discovery resources. */

const CORE = 'urn:ietf:params:scim:schemas:core:2.0';
const bjensen = (extra: Record<string, unknown> = {}) =>
  entraUser('bjensen@example.com', { externalId: 'bjensen', name: { formatted: 'Ms. Barbara J Jensen III', familyName: 'Jensen', givenName: 'Barbara' }, ...extra });

describe.each(TEST_DIALECTS)('SCIM /Users (RFC 7644) on %s', (dialect) => {
  const open = useTestApps(dialect);

  async function service() {
    const t = await open();
    const { token } = await scimSchool(t.services);
    const scim = scimClient(t.app, token);
    const userNames = async (filter: string) => scimJson<ScimList>(await scim.get(usersWhere(filter)), 200).Resources.map((user) => user.userName);
    return { t, token, scim, userNames };
  }

  it('create answers 201 with the resource, Location equal to meta.location; GET answers the same', async () => {
    const { scim } = await service();
    const response = await scim.post('/Users', bjensen());
    const created = scimJson(response, 201);
    expect(created).toMatchObject({ schemas: [USER_SCHEMA], userName: 'bjensen@example.com', externalId: 'bjensen', active: true, meta: { resourceType: 'User' } });
    expect(response.headers.location).toBe(created.meta.location);
    expect(created.meta.location.endsWith(`/scim/v2/Users/${created.id}`)).toBe(true);
    expect(created.meta.lastModified).toBe(created.meta.created);
    expect(scimJson(await scim.get(`/Users/${created.id}`), 200)).toEqual(created);
    expectScimError(await scim.get('/Users/2819c223-7f76-453a-919d-413861904646'), 404);
  });

  it('lists in pages of startIndex and count (3.4.2.4) over 5 users', async () => {
    const { t, scim } = await service();
    const names: string[] = [];
    for (let n = 1; n <= 5; n += 1) {
      t.clock.advance(1);
      names.push(scimJson(await scim.post('/Users', entraUser(`user${n}@example.com`)), 201).userName);
    }
    const page = async (query: string) => scimJson<ScimList>(await scim.get(`/Users?${query}`), 200);
    const shape = (list: ScimList) => ({ totalResults: list.totalResults, startIndex: list.startIndex, itemsPerPage: list.itemsPerPage, userNames: list.Resources.map((user) => user.userName) });
    expect(shape(await page('startIndex=1&count=2'))).toEqual({ totalResults: 5, startIndex: 1, itemsPerPage: 2, userNames: names.slice(0, 2) });
    expect(shape(await page('startIndex=3&count=2'))).toEqual({ totalResults: 5, startIndex: 3, itemsPerPage: 2, userNames: names.slice(2, 4) });
    expect(shape(await page('startIndex=5&count=2'))).toEqual({ totalResults: 5, startIndex: 5, itemsPerPage: 1, userNames: names.slice(4) });
    expect(shape(await page('startIndex=6&count=2'))).toEqual({ totalResults: 5, startIndex: 6, itemsPerPage: 0, userNames: [] });
    expect(shape(await page('count=0'))).toEqual({ totalResults: 5, startIndex: 1, itemsPerPage: 0, userNames: [] });
    expect(shape(await page('startIndex=0'))).toEqual({ totalResults: 5, startIndex: 1, itemsPerPage: 5, userNames: names });
    expect((await page('startIndex=1')).schemas).toEqual([LIST_SCHEMA]);
  });

  it('filters: userName without case, externalId with case, emails, and/or, active, meta.lastModified', async () => {
    const { t, scim, userNames } = await service();
    const created = new Map<string, string>();
    for (const [userName, externalId] of [['Anna@example.com', 'Ext-A'], ['bob@example.com', 'ext-b'], ['cleo@example.com', 'ext-c']] as const) {
      t.clock.advance(1); // the list is in creation order; within one second, in id order
      created.set(userName, scimJson(await scim.post('/Users', entraUser(userName, { externalId, emails: [{ type: 'work', value: userName.toLowerCase() }] })), 201).id);
    }
    const before = new Date(t.clock.now()).toISOString();
    t.clock.advance(60);
    scimJson(await scim.patch(`/Users/${created.get('bob@example.com')}`, [{ op: 'replace', path: 'active', value: false }]), 200);

    expect(await userNames('userName eq "ANNA@EXAMPLE.COM"')).toEqual(['Anna@example.com']);
    expect(await userNames('externalId eq "Ext-A"')).toEqual(['Anna@example.com']);
    expect(await userNames('externalId eq "ext-a"')).toEqual([]);
    expect(await userNames('emails.value eq "BOB@example.com"')).toEqual(['bob@example.com']);
    expect(await userNames('emails[value eq "cleo@example.com"]')).toEqual(['cleo@example.com']);
    expect(await userNames('userName eq "anna@example.com" or externalId eq "ext-c"')).toEqual(['Anna@example.com', 'cleo@example.com']);
    expect(await userNames('userName eq "anna@example.com" and externalId eq "ext-c"')).toEqual([]);
    expect(await userNames('active eq false')).toEqual(['bob@example.com']);
    expect(await userNames('active eq true and (emails.value eq "bob@example.com" or emails.value eq "cleo@example.com")')).toEqual(['cleo@example.com']);
    expect(await userNames(`meta.lastModified gt "${before}"`)).toEqual(['bob@example.com']);
    expect(await userNames(`meta.lastModified le "${before}"`)).toEqual(['Anna@example.com', 'cleo@example.com']);
  });

  it('a filter on an attribute the service cannot filter by, or a malformed one, is 400 invalidFilter', async () => {
    const { scim } = await service();
    expectScimError(await scim.get(usersWhere('displayName eq "x"')), 400, 'invalidFilter');
    expectScimError(await scim.get(usersWhere('userName eq')), 400, 'invalidFilter');
    expectScimError(await scim.get(usersWhere('userName xx "a"')), 400, 'invalidFilter');
    expectScimError(await scim.get(usersWhere('userName eq "a" trailing')), 400, 'invalidFilter');
  });

  it('userName is unique in the school without case, externalId with case (409 uniqueness), on create and on replace', async () => {
    const { scim } = await service();
    const first = scimJson(await scim.post('/Users', bjensen()), 201);
    expectScimError(await scim.post('/Users', bjensen({ externalId: 'other' })), 409, 'uniqueness');
    expectScimError(await scim.post('/Users', bjensen({ userName: 'BJensen@Example.com', externalId: 'other' })), 409, 'uniqueness');
    expectScimError(await scim.post('/Users', entraUser('someone@example.com', { externalId: 'bjensen' })), 409, 'uniqueness');
    const second = scimJson(await scim.post('/Users', entraUser('someone@example.com', { externalId: 'BJENSEN' })), 201);
    expectScimError(await scim.put(`/Users/${second.id}`, entraUser('BJENSEN@example.com', { externalId: 'BJENSEN' })), 409, 'uniqueness');
    expectScimError(await scim.patch(`/Users/${second.id}`, [{ op: 'replace', path: 'externalId', value: 'bjensen' }]), 409, 'uniqueness');
    expect(scimJson(await scim.get(`/Users/${second.id}`), 200)).toEqual(second);
    expect(scimJson(await scim.get(`/Users/${first.id}`), 200)).toEqual(first);
  });

  it('PUT without "active" keeps it (and externalId); PUT replaces the rest', async () => {
    const { scim } = await service();
    const { id } = scimJson(await scim.post('/Users', bjensen({ active: false, title: 'Principal' })), 201);
    const replaced = scimJson(await scim.put(`/Users/${id}`, { schemas: [USER_SCHEMA], userName: 'bjensen@example.com', displayName: 'Babs' }), 200);
    expect(replaced).toMatchObject({ id, userName: 'bjensen@example.com', externalId: 'bjensen', active: false, displayName: 'Babs' });
    expect(replaced).not.toHaveProperty('title');
    expect(replaced).not.toHaveProperty('name');
  });

  it('an unknown attribute is 400 invalidValue; a body that is not JSON, or lacks "schemas", 400 invalidSyntax', async () => {
    const { t, token, scim } = await service();
    expectScimError(await scim.post('/Users', bjensen({ shoeSize: 44 })), 400, 'invalidValue');
    expectScimError(await scim.post('/Users', bjensen({ name: { givenName: 'Barbara', nickname: 'Babs' } })), 400, 'invalidValue');
    const { schemas: _schemas, ...withoutSchemas } = bjensen();
    expectScimError(await scim.post('/Users', withoutSchemas), 400, 'invalidSyntax');
    expectScimError(await scim.post('/Users', { ...withoutSchemas, schemas: [ENTERPRISE_SCHEMA] }), 400, 'invalidSyntax');
    const raw = (payload: string | Buffer) =>
      t.app.inject({ method: 'POST', url: '/scim/v2/Users', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' }, payload });
    expectScimError(await raw('{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": '), 400, 'invalidSyntax');
    expectScimError(await raw('userName=bjensen'), 400, 'invalidSyntax');
    expectScimError(await raw(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), 400, 'invalidSyntax');
    expect(scimJson<ScimList>(await scim.get('/Users'), 200).totalResults).toBe(0);
  });

  it('a PATCH that cannot be applied (no target, unknown path, a later operation failing) leaves the resource unchanged', async () => {
    const { t, scim } = await service();
    const created = scimJson(await scim.post('/Users', bjensen()), 201);
    t.clock.advance(60);
    expectScimError(await scim.patch(`/Users/${created.id}`, [{ op: 'remove' }]), 400, 'noTarget');
    expectScimError(await scim.patch(`/Users/${created.id}`, [{ op: 'replace', path: 'shoeSize', value: 44 }]), 400, 'invalidPath');
    expectScimError(await scim.patch(`/Users/${created.id}`, [{ op: 'replace', path: 'name.nickname', value: 'Babs' }]), 400, 'invalidPath');
    const partly = [
      { op: 'replace', path: 'name.familyName', value: 'Changed' },
      { op: 'replace', path: 'active', value: false },
      { op: 'remove', path: 'emails[type eq "home"]' },
      { op: 'add', path: 'emails', value: [{ type: 'home', valeu: 'typo@example.com' }] },
    ];
    expectScimError(await scim.patch(`/Users/${created.id}`, partly), 400, 'invalidValue');
    expect(scimJson(await scim.get(`/Users/${created.id}`), 200)).toEqual(created);
  });

  it('an update that changes nothing answers the resource unchanged, meta.lastModified included', async () => {
    const { t, scim } = await service();
    const created = scimJson(await scim.post('/Users', bjensen()), 201);
    t.clock.advance(3600);
    expect(scimJson(await scim.patch(`/Users/${created.id}`, [{ op: 'replace', path: 'name.familyName', value: 'Jensen' }]), 200)).toEqual(created);
    expect(scimJson(await scim.put(`/Users/${created.id}`, created), 200)).toEqual(created);
    expect(scimJson(await scim.patch(`/Users/${created.id}`, [{ op: 'remove', path: 'title' }]), 200)).toEqual(created);
    expect(scimJson(await scim.get(`/Users/${created.id}`), 200)).toEqual(created);
  });

  it('/ServiceProviderConfig: PATCH and filters (at most 200 results) supported; bulk, sort, ETags, password change not', async () => {
    const { scim } = await service();
    const config = scimJson<Record<string, unknown>>(await scim.get('/ServiceProviderConfig'), 200);
    expect(config).toMatchObject({
      schemas: [`${CORE}:ServiceProviderConfig`],
      patch: { supported: true },
      bulk: { supported: false },
      filter: { supported: true, maxResults: 200 },
      changePassword: { supported: false },
      sort: { supported: false },
      etag: { supported: false },
      authenticationSchemes: [expect.objectContaining({ type: 'oauthbearertoken', name: expect.any(String), description: expect.any(String) })],
      meta: { resourceType: 'ServiceProviderConfig' },
    });
  });

  it('/ResourceTypes and /Schemas answer ListResponses of the User type and its schemas', async () => {
    const { scim } = await service();
    const types = scimJson<ScimList & { Resources: Record<string, unknown>[] }>(await scim.get('/ResourceTypes'), 200);
    expect(types).toMatchObject({ schemas: [LIST_SCHEMA], totalResults: 1, startIndex: 1, itemsPerPage: 1 });
    const user = { schemas: [`${CORE}:ResourceType`], id: 'User', name: 'User', endpoint: '/Users', schema: USER_SCHEMA, schemaExtensions: [{ schema: ENTERPRISE_SCHEMA, required: false }] };
    expect(types.Resources).toEqual([expect.objectContaining(user)]);
    expect(scimJson(await scim.get('/ResourceTypes/User'), 200)).toEqual(types.Resources[0]);
    expectScimError(await scim.get('/ResourceTypes/Group'), 404);

    const schemas = scimJson<{ totalResults: number; Resources: { schemas: string[]; id: string; attributes: Record<string, unknown>[] }[] }>(await scim.get('/Schemas'), 200);
    expect(schemas.Resources.map((schema) => schema.id)).toEqual([USER_SCHEMA, ENTERPRISE_SCHEMA]);
    expect(schemas.totalResults).toBe(2);
    const [core] = schemas.Resources;
    expect(core?.schemas).toEqual([`${CORE}:Schema`]);
    const attribute = (name: string) => core?.attributes.find((candidate) => candidate.name === name);
    expect(attribute('userName')).toMatchObject({ type: 'string', multiValued: false, required: true, caseExact: false, mutability: 'readWrite', returned: 'default', uniqueness: 'server' });
    expect(attribute('password')).toMatchObject({ mutability: 'writeOnly', returned: 'never' });
    expect(attribute('emails')).toMatchObject({ type: 'complex', multiValued: true, subAttributes: expect.arrayContaining([expect.objectContaining({ name: 'value' })]) });
    expect(scimJson(await scim.get(`/Schemas/${ENTERPRISE_SCHEMA}`), 200)).toEqual(schemas.Resources[1]);
  });

  it('errors outside the User resource keep the error schema: 401 without a token, 404 for Groups', async () => {
    const { t, scim } = await service();
    const anonymous = await t.app.inject({ method: 'GET', url: '/scim/v2/Users' });
    expectScimError(anonymous, 401);
    expect(anonymous.headers['www-authenticate']).toMatch(/^Bearer/);
    expectScimError(await scim.get('/Groups'), 404);
    expectScimError(await scim.post('/Bulk', { schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'], Operations: [] }), 404);
  });
});

