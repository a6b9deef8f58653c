import SCIMMY from 'scimmy';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { ENTERPRISE_SCHEMA, ERROR_SCHEMA, LIST_SCHEMA, PATCH_SCHEMA, USER_SCHEMA, entraUser, scimClient, scimSchool, usersWhere, type ScimList, type ScimUser } from '../../helpers/scim.js';

/**
 * A differential test with SCIMMY (an independent SCIM 2.0 implementation) as the oracle: every
 * answer is a valid User, ListResponse or Error to it; a filter lists the users SCIMMY's
 * Filter.match selects; a PATCH leaves the user as SCIMMY's PatchOp would. Where SCIMMY departs
 * from RFC 7643/7644 the case says so, cites the section, and states the RFC's answer instead.
 */

SCIMMY.Resources.declare(SCIMMY.Resources.User);
SCIMMY.Resources.User.extend(SCIMMY.Schemas.EnterpriseUser, false);

type Json = Record<string, unknown>;
const json = (value: unknown): Json => JSON.parse(JSON.stringify(value)) as Json;

/** A User the service answers: SCIMMY's User schema (with the extension) accepts it for 'out' and coerces it to itself. */
function expectScimmyUser(user: Json): void {
  expect(user).not.toHaveProperty('password'); // returned "never" (RFC 7643 §4.1.1): SCIMMY would drop it
  expect(json(new SCIMMY.Schemas.User(user, 'out'))).toEqual(user);
}

/** An error answer: SCIMMY reads it back as the SCIMError it carries, and builds the same message from its status and scimType (RFC 7644 §3.12). */
function expectScimmyError(body: Json, status: number): void {
  expect(() => new SCIMMY.Messages.Error(body)).toThrow(SCIMMY.Types.Error);
  const cause = { status: Number(body.status), scimType: body.scimType, detail: body.detail } as SCIMMY.Messages.ErrorResponse.CauseDetails;
  expect(json(new SCIMMY.Messages.Error(cause))).toEqual(body);
  expect(body.status).toBe(String(status));
}

/** Every answer is checked by SCIMMY by what it says it is; each User in a list is checked as a User. */
function expectConformant(response: LightMyRequestResponse): void {
  if (response.statusCode === 204) return expect(response.body).toBe('');
  const body = response.json<Json>();
  const schemas = body.schemas as string[];
  if (schemas.includes(ERROR_SCHEMA)) return expectScimmyError(body, response.statusCode);
  if (schemas.includes(LIST_SCHEMA)) {
    expect(json(new SCIMMY.Messages.ListResponse(body as never))).toEqual(body);
    return (body as unknown as ScimList).Resources.forEach((user) => expectScimmyUser(user));
  }
  expect(schemas).toContain(USER_SCHEMA);
  expectScimmyUser(body);
}

/** A SCIM client whose every answer goes through expectConformant. */
function checkedClient(t: TestApp, token: string) {
  const scim = scimClient(t.app, token);
  const checked = async (answer: Promise<LightMyRequestResponse>) => {
    const response = await answer;
    expectConformant(response);
    return response;
  };
  const ok = async <T = ScimUser>(answer: Promise<LightMyRequestResponse>, status = 200): Promise<T> => {
    const response = await checked(answer);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<T>();
  };
  return { scim, checked, ok };
}

const work = (value: string, primary?: boolean) => ({ type: 'work', value, ...(primary === undefined ? {} : { primary }) });
const home = (value: string) => ({ type: 'home', value });

/** Twelve users, created a second apart: userName and address case, externalId case and LIKE wildcards, several addresses, inactive ones. */
const SEEDS: readonly (readonly [label: string, userName: string, externalId: string | undefined, active: boolean, emails: readonly Json[]])[] = [
  ['anna', 'Anna@Example.com', 'Ext-A', true, [work('anna@example.com', true)]],
  ['bob', 'bob@example.com', 'ext-b', true, [work('bob@example.com', true), home('bob@home.org')]],
  ['cleo', 'cleo@example.org', 'EXT-C', false, [work('cleo@example.org')]],
  ['dan', 'dan@school.edu', undefined, true, [home('dan@home.org'), work('dan@school.edu', true)]],
  ['eve', 'EVE@school.edu', 'ext-e', false, [{ type: 'other', value: 'eve@other.net' }]],
  ['frank', 'frank', 'ext_f', true, [work('frank@school.edu')]],
  ['grace', 'grace@example.com', 'grace%1', true, [work('Grace@Example.com', true)]],
  ['heidi', 'heidi@example.com', 'ext-h', true, [work('heidi@example.com'), work('h.admin@example.com')]],
  ['ivan', 'Ivan@Example.COM', 'EXT-i', true, [work('ivan@example.com', true)]],
  ['judy', 'judy@example.net', undefined, false, [home('judy@home.org')]],
  ['mallory', 'mallory@example.com', 'extra', true, [work('mallory@example.com', true)]],
  ['oscar', 'oscar.o@example.org', 'ext-o', true, [work('oscar@example.org', true)]],
];

/**
 * Filters on what the service filters by. `{id:cleo}` is cleo's id, `{created:eve+500}` eve's
 * meta.created plus 500 ms, `{modified:bob}` bob's meta.lastModified. Where SCIMMY departs from the
 * RFC, `rfc` says how and `expected` is the RFC's answer (labels, in creation order) or the 400
 * invalidFilter the service answers. Every user has an address: SCIMMY's match throws a TypeError
 * on a user without the multi-valued attribute a filter names.
 */
const CASE = 'SCIMMY compares every string with case; userName and emails.value are caseExact false (RFC 7643 §4.1.1, §4.1.2; RFC 7644 §3.4.2.2)';
const NOT = 'SCIMMY applies a not() to each comparison inside it (RFC 7644 §3.4.2.2: not() matches when the whole expression is false)';
const FILTERS: readonly { filter: string; rfc?: string; expected?: readonly string[] | 'invalidFilter' }[] = [
  { filter: 'id eq "{id:cleo}"' },
  { filter: 'id ne "{id:anna}" and active eq false' },
  { filter: 'userName eq "bob@example.com"' },
  { filter: 'userName eq "ANNA@EXAMPLE.COM"', rfc: CASE, expected: ['anna'] },
  { filter: 'userName sw "frank"' },
  { filter: 'userName sw "e"', rfc: CASE, expected: ['eve'] },
  { filter: 'userName co "school"' },
  { filter: 'userName ew ".org"' },
  { filter: 'userName gt "heidi@example.com"', rfc: CASE, expected: ['ivan', 'judy', 'mallory', 'oscar'] },
  { filter: 'userName le "dan@school.edu"', rfc: CASE, expected: ['anna', 'bob', 'cleo', 'dan'] },
  { filter: 'userName pr' },
  { filter: 'externalId eq "ext-b"' },
  { filter: 'externalId eq "EXT-B"' },
  { filter: 'externalId sw "ext"' },
  { filter: 'externalId co "_"' },
  { filter: 'externalId co "%"' },
  { filter: 'externalId ew "c"' },
  { filter: 'externalId gt "ext-e"' },
  { filter: 'externalId pr' },
  { filter: 'externalId ne "ext-b"' },
  { filter: 'not (externalId eq "ext-b")' },
  { filter: 'not (externalId pr)' },
  { filter: 'emails.value eq "bob@home.org"' },
  { filter: 'emails.value eq "GRACE@example.com"', rfc: CASE, expected: ['grace'] },
  { filter: 'emails.value co "school"' },
  { filter: 'emails.value ew ".org"' },
  { filter: 'emails[value sw "h"]' },
  { filter: 'emails.value pr' },
  { filter: 'emails.value ne "bob@example.com"' },
  { filter: 'active eq true' },
  { filter: 'active eq false' },
  { filter: 'active ne true' },
  { filter: 'active gt false', rfc: 'SCIMMY orders booleans; RFC 7644 §3.4.2.2: gt, ge, lt, le on a boolean SHALL be 400 invalidFilter', expected: 'invalidFilter' },
  { filter: 'meta.created gt "{created:eve}"' },
  { filter: 'meta.created le "{created:cleo}"' },
  { filter: 'meta.created lt "{created:eve+500}"' },
  { filter: 'meta.created ge "{created:eve+500}"' },
  { filter: 'meta.created eq "{created:grace}"' },
  { filter: 'meta.created eq "{created:grace+500}"' },
  { filter: 'meta.created gt "2026-01-05T09:00:06+01:00"' },
  { filter: 'meta.lastModified gt "{created:oscar}"' },
  { filter: 'meta.lastModified ge "{modified:bob}" and active eq true' },
  { filter: 'meta.created sw "2026"', rfc: 'SCIMMY matches the text; the service refuses co, sw, ew on a time, as RFC 7644 §3.12 (invalidFilter) lets it', expected: 'invalidFilter' },
  { filter: 'userName sw "b" or userName sw "d"' },
  { filter: 'active eq true and emails.value ew ".com"' },
  { filter: 'not (active eq true) and externalId pr' },
  { filter: '(userName co "example" or externalId eq "ext-e") and active eq false' },
  { filter: 'not (userName sw "b" or userName sw "d")', rfc: NOT, expected: ['anna', 'cleo', 'eve', 'frank', 'grace', 'heidi', 'ivan', 'judy', 'mallory', 'oscar'] },
  { filter: 'userName co "example" and not (emails.value co "home")', rfc: NOT, expected: ['anna', 'cleo', 'grace', 'heidi', 'ivan', 'mallory', 'oscar'] },
  { filter: 'not (not (active eq false))', rfc: 'SCIMMY cannot read a not() in a not() (RFC 7644 §3.4.2.2, figure 1: FILTER = ... / "not" "(" FILTER ")")', expected: ['cleo', 'eve'] },
];

const ENTERPRISE_PATH = (name: string) => `${ENTERPRISE_SCHEMA}:${name}`;

/**
 * PATCH bodies in RFC 7644 §3.5.2's shapes, each applied to a fresh user made by `patchable`. Where
 * SCIMMY departs from the RFC, `rfc` says how and SCIMMY applies `scimmy`, the same change as the
 * RFC defines it spelled in operations SCIMMY applies as the RFC does.
 */
const PRIMARY = 'SCIMMY keeps two primary values; RFC 7644 §3.5.2: setting primary to true SHALL set it to false on the other values';
const PATCHES: readonly { name: string; ops: readonly Json[]; rfc?: string; scimmy?: readonly Json[] }[] = [
  { name: 'replace a singular attribute', ops: [{ op: 'replace', path: 'title', value: 'Principal' }] },
  { name: 'replace active', ops: [{ op: 'replace', path: 'active', value: false }] },
  { name: 'replace userName and externalId', ops: [{ op: 'replace', path: 'userName', value: 'renamed@example.com' }, { op: 'replace', path: 'externalId', value: 'New-Ext' }] },
  { name: 'attribute names without case', ops: [{ op: 'replace', path: 'DisplayName', value: 'Pat D.' }, { op: 'add', path: 'NAME.middleName', value: 'Q' }],
    rfc: 'SCIMMY refuses a path not spelled as the schema does; attribute names are case insensitive (RFC 7643 §2.1)', scimmy: [{ op: 'replace', path: 'displayName', value: 'Pat D.' }, { op: 'add', path: 'name.middleName', value: 'Q' }] },
  { name: 'replace without a path', ops: [{ op: 'replace', value: { active: false, title: 'Principal', nickName: 'P' } }] },
  { name: 'add without a path', ops: [{ op: 'add', value: { preferredLanguage: 'fr-CA', locale: 'fr-CA', timezone: 'America/Toronto' } }] },
  { name: 'remove a singular attribute', ops: [{ op: 'remove', path: 'title' }] },
  { name: 'remove a sub-attribute', ops: [{ op: 'remove', path: 'name.givenName' }] },
  { name: 'replace a sub-attribute', ops: [{ op: 'replace', path: 'name.familyName', value: 'Smith' }] },
  { name: 'replace a complex attribute (the others stay)', ops: [{ op: 'replace', path: 'name', value: { givenName: 'Patricia' } }],
    rfc: 'SCIMMY drops the sub-attributes not given; RFC 7644 §3.5.2.3: "Sub-attributes that are not specified in the value parameter are left unchanged"', scimmy: [{ op: 'replace', path: 'name.givenName', value: 'Patricia' }] },
  { name: 'add to a multi-valued attribute (appends)', ops: [{ op: 'add', path: 'emails', value: [{ type: 'other', value: 'pat@other.net' }] }] },
  { name: 'add a primary value (the other loses primary)', ops: [{ op: 'add', path: 'emails', value: [{ type: 'other', value: 'pat@other.net', primary: true }] }],
    rfc: PRIMARY, scimmy: [{ op: 'add', path: 'emails', value: [{ type: 'other', value: 'pat@other.net', primary: true }] }, { op: 'replace', path: 'emails[type eq "work"].primary', value: false }] },
  { name: 'replace a multi-valued attribute', ops: [{ op: 'replace', path: 'phoneNumbers', value: [{ type: 'fax', value: '+1 555 0111' }] }] },
  { name: 'replace through a value filter and sub-attribute', ops: [{ op: 'replace', path: 'emails[type eq "work"].value', value: 'pat.new@example.com' }] },
  { name: 'replace the elements a filter selects', ops: [{ op: 'replace', path: 'emails[type eq "home"]', value: { type: 'home', value: 'pat@new-home.org' } }] },
  { name: 'switch primary through a filter', ops: [{ op: 'replace', path: 'emails[type eq "home"].primary', value: true }],
    rfc: PRIMARY, scimmy: [{ op: 'replace', path: 'emails[type eq "home"].primary', value: true }, { op: 'replace', path: 'emails[type eq "work"].primary', value: false }] },
  { name: 'a filter with and', ops: [{ op: 'replace', path: 'phoneNumbers[type eq "work" and primary eq true].value', value: '+1 555 0177' }] },
  { name: 'remove the elements a filter selects', ops: [{ op: 'remove', path: 'emails[type eq "home"]' }] },
  { name: 'remove with a filter on value', ops: [{ op: 'remove', path: 'phoneNumbers[value eq "+1 555 0199"]' }] },
  { name: 'remove a sub-attribute of filtered elements', ops: [{ op: 'remove', path: 'emails[type eq "work"].primary' }] },
  { name: 'remove a whole multi-valued attribute', ops: [{ op: 'remove', path: 'phoneNumbers' }] },
  { name: 'replace a sub-attribute of a complex multi-valued element', ops: [{ op: 'replace', path: 'addresses[type eq "work"].locality', value: 'Shelbyville' }] },
  { name: 'enterprise: replace an attribute', ops: [{ op: 'replace', path: ENTERPRISE_PATH('department'), value: 'Mathematics' }] },
  { name: 'enterprise: replace the manager', ops: [{ op: 'replace', path: ENTERPRISE_PATH('manager'), value: { value: 'new-boss' } }] },
  { name: 'enterprise: a sub-attribute of the manager', ops: [{ op: 'replace', path: `${ENTERPRISE_PATH('manager')}.value`, value: 'other-boss' }],
    rfc: 'SCIMMY finds no target for an extension attribute\'s sub-attribute; RFC 7644 §3.5.2 and §3.10: attrPath = [URI ":"] ATTRNAME *1subAttr', scimmy: [{ op: 'replace', path: ENTERPRISE_PATH('manager'), value: { value: 'other-boss' } }] },
  { name: 'enterprise: remove an attribute', ops: [{ op: 'remove', path: ENTERPRISE_PATH('employeeNumber') }] },
  { name: 'enterprise: add without a path', ops: [{ op: 'add', value: { [ENTERPRISE_SCHEMA]: { costCenter: '4130', division: 'East' } } }] },
  { name: 'several operations in order', ops: [{ op: 'remove', path: 'emails' }, { op: 'add', path: 'emails', value: [{ type: 'work', value: 'only@example.com', primary: true }] }, { op: 'replace', path: 'nickName', value: 'Only' }] },
];

function patchable(n: number): Json {
  return entraUser(`patch${n}@example.com`, {
    externalId: `patch-${n}`, displayName: 'Pat Doe', nickName: 'Pat', title: 'Teacher',
    name: { formatted: 'Pat Doe', familyName: 'Doe', givenName: 'Pat' },
    emails: [work(`patch${n}@example.com`, true), home(`patch${n}@home.org`)],
    phoneNumbers: [{ type: 'work', value: '+1 555 0100', primary: true }, { type: 'mobile', value: '+1 555 0199' }],
    addresses: [{ type: 'work', locality: 'Springfield', country: 'US', primary: true }],
    [ENTERPRISE_SCHEMA]: { employeeNumber: '701984', department: 'Science', manager: { value: 'boss-id' } },
  });
}

const withoutMeta = ({ meta: _meta, ...rest }: Json): Json => rest;

describe.each(TEST_DIALECTS)('SCIMMY as the oracle on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => void (t = await createTestApp({}, dialect)));
  afterAll(() => t.close());

  describe('filters: the service lists what SCIMMY selects from the users as GET shows them', () => {
    const ids = new Map<string, string>();
    let users: ScimUser[] = [];
    let client: ReturnType<typeof checkedClient>;
    const list = async (filter: string) => (await client.ok<ScimList>(client.scim.get(usersWhere(filter)))).Resources.map((user) => user.id);
    beforeAll(async () => {
      client = checkedClient(t, (await scimSchool(t.services, 'filters')).token);
      const { scim, ok } = client;
      for (const [label, userName, externalId, active, emails] of SEEDS) {
        t.clock.advance(1);
        ids.set(label, (await ok(scim.post('/Users', entraUser(userName, { externalId, active, emails })), 201)).id);
      }
      t.clock.advance(100); // bob and judy change later: their meta.lastModified moves
      await ok(scim.patch(`/Users/${ids.get('bob')}`, [{ op: 'replace', path: 'title', value: 'Coach' }]));
      await ok(scim.patch(`/Users/${ids.get('judy')}`, [{ op: 'replace', path: 'active', value: true }]));
      users = await Promise.all([...ids.values()].map((id) => ok(scim.get(`/Users/${id}`))));
    });

    const resolve = (filter: string) =>
      filter.replace(/\{(id|created|modified):(\w+)([+-]\d+)?\}/g, (_, kind: string, label: string, offset = '0') => {
        const user = users.find((candidate) => candidate.id === ids.get(label));
        if (user === undefined) throw new Error(`no user ${label}`);
        if (kind === 'id') return user.id;
        return new Date(Date.parse(kind === 'created' ? user.meta.created : user.meta.lastModified) + Number(offset)).toISOString();
      });

    it.each(FILTERS)('$filter', async ({ filter, expected }) => {
      const text = resolve(filter);
      if (expected === 'invalidFilter') {
        const body = (await client.checked(client.scim.get(usersWhere(text)))).json<Json>();
        return expect(body).toMatchObject({ status: '400', scimType: 'invalidFilter' });
      }
      const oracle = expected === undefined ? new SCIMMY.Types.Filter(text).match(users).map((user: ScimUser) => user.id) : expected.map((label) => ids.get(label));
      expect(await list(text)).toEqual(oracle);
    });
  });

  describe('PATCH: the service leaves a user as SCIMMY applies the same PatchOp to it as GET shows it', () => {
    let client: ReturnType<typeof checkedClient>;
    beforeAll(async () => {
      client = checkedClient(t, (await scimSchool(t.services, 'patches')).token);
    });

    it.each(PATCHES.map((patch, index) => ({ ...patch, index })))('$name', async ({ ops, scimmy = ops, index }) => {
      const { scim, ok } = client;
      const created = await ok(scim.post('/Users', patchable(index)), 201);
      const before = await ok(scim.get(`/Users/${created.id}`));
      const message = new SCIMMY.Messages.PatchOp({ schemas: [PATCH_SCHEMA], Operations: scimmy } as never);
      const applied: unknown = await message.apply(new SCIMMY.Schemas.User(before), (user) => Promise.resolve(user));
      const expected = withoutMeta(json(new SCIMMY.Schemas.User(applied ?? before, 'out')));
      const answered = await ok(scim.patch(`/Users/${created.id}`, ops));
      expect(await ok(scim.get(`/Users/${created.id}`))).toEqual(answered);
      expect(withoutMeta(answered)).toEqual(expected);
    });
  });

  it('every answer (create, read, list, replace, patch, errors) is a User, ListResponse or Error SCIMMY accepts as it is', async () => {
    const { token } = await scimSchool(t.services, 'answers');
    const { scim, checked, ok } = checkedClient(t, token);
    const rich = entraUser('Rich.User@Example.com', {
      displayName: 'Rich User', nickName: 'Rich', profileUrl: 'https://example.com/rich', title: 'Dean', userType: 'Employee',
      preferredLanguage: 'en-US', locale: 'en-US', timezone: 'America/Los_Angeles',
      name: { formatted: 'Dr. Rich Q User', familyName: 'User', givenName: 'Rich', middleName: 'Q', honorificPrefix: 'Dr.', honorificSuffix: 'III' },
      emails: [work('rich.user@example.com', true), { ...home('rich@home.org'), display: 'Home' }],
      phoneNumbers: [{ type: 'work', value: '+1 555 0100', primary: true }, { type: 'mobile', value: '+1 555 0199' }],
      addresses: [{ type: 'work', formatted: '1 Main St', streetAddress: '1 Main St', locality: 'Springfield', region: 'IL', postalCode: '62701', country: 'US', primary: true }],
      [ENTERPRISE_SCHEMA]: { employeeNumber: '701984', costCenter: '4130', organization: 'District', division: 'Schools', department: 'Science', manager: { value: 'boss-id' } },
    });
    const created = await ok(scim.post('/Users', rich), 201);
    expect(created).toMatchObject({ title: 'Dean', [ENTERPRISE_SCHEMA]: { manager: { value: 'boss-id' } } });
    await ok(scim.get(`/Users/${created.id}`));
    await ok(scim.post('/Users', entraUser('second@example.com', { active: false })), 201);
    expect((await ok<ScimList>(scim.get('/Users'))).totalResults).toBe(2);
    expect((await ok<ScimList>(scim.get(`${usersWhere('userName eq "rich.user@example.com"')}&count=1`))).Resources).toHaveLength(1);
    const replaced = await ok(scim.put(`/Users/${created.id}`, { ...rich, title: 'Provost', nickName: undefined }));
    expect(replaced).not.toHaveProperty('nickName');
    await ok(scim.patch(`/Users/${created.id}`, [{ op: 'add', path: 'emails', value: [work('second.work@example.com')] }, { op: 'replace', path: 'active', value: false }]));

    const errors: [Promise<LightMyRequestResponse>, number, string?][] = [
      [scim.get('/Users/2819c223-7f76-453a-919d-413861904646'), 404],
      [scim.post('/Users', entraUser('RICH.USER@example.com')), 409, 'uniqueness'],
      [scim.get(usersWhere('title eq "Dean"')), 400, 'invalidFilter'],
      [scim.get(usersWhere('userName eq')), 400, 'invalidFilter'],
      [scim.post('/Users', { ...rich, userName: 'x@example.com', password: 'hunter2' }), 400, 'mutability'],
      [scim.post('/Users', { ...rich, userName: 'y@example.com', shoeSize: 42 }), 400, 'invalidValue'],
      [scim.post('/Users', { userName: 'z@example.com' }), 400, 'invalidSyntax'],
      [scim.patch(`/Users/${created.id}`, [{ op: 'replace', path: 'shoeSize', value: 1 }]), 400, 'invalidPath'],
      [scim.patch(`/Users/${created.id}`, [{ op: 'replace', path: 'emails[type eq "pager"]', value: work('p@example.com') }]), 400, 'noTarget'],
    ];
    for (const [answer, status, scimType] of errors) {
      const body = (await checked(answer)).json<Json>();
      expect(body).toMatchObject({ schemas: [ERROR_SCHEMA], status: String(status), ...(scimType === undefined ? {} : { scimType }) });
    }
  });
});
