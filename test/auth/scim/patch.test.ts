import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_PATCH_OPERATIONS, PATCH_OP_SCHEMA, applyPatch, type ScimDocument } from '../../../src/auth/scim/patch.js';
import { ScimError } from '../../../src/auth/scim/scim-error.js';
import { ENTERPRISE_SCHEMA, USER_SCHEMA } from '../../../src/auth/scim/user-schema.js';

const MANAGER = `${ENTERPRISE_SCHEMA}:manager`;

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) deepFreeze(item);
  return Object.freeze(value);
}

/** Frozen: a PATCH that changed its input would throw in these (strict) modules. */
const USER: ScimDocument = deepFreeze({
  schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA],
  id: '2819c223-7f76-453a-919d-413861904646',
  userName: 'bjensen@example.com',
  name: { familyName: 'Jensen', givenName: 'Barbara' },
  active: true,
  emails: [
    { value: 'bjensen@example.com', type: 'work', primary: true },
    { value: 'babs@jensen.org', type: 'home' },
  ],
  [ENTERPRISE_SCHEMA]: { department: 'Tour Operations', manager: { value: '26118915-6090-4610-87e4-49d8ca9f808d', displayName: 'John Smith' } },
  meta: { resourceType: 'User', created: '2010-01-23T04:56:22Z', lastModified: '2011-05-13T04:42:34Z' },
});

const message = (...operations: unknown[]) => ({ schemas: [PATCH_OP_SCHEMA], Operations: operations });
const patched = (...operations: unknown[]) => applyPatch(USER, message(...operations));
const patchedFrom = (resource: ScimDocument, ...operations: unknown[]) => applyPatch(deepFreeze(resource), message(...operations));
const { emails: _emails, ...WITHOUT_EMAILS } = USER;
const [WORK, HOME] = USER.emails as [Record<string, unknown>, Record<string, unknown>];

/** The ScimError applyPatch throws, checked for its status and scimType. */
function refusal(body: unknown, scimType: string, resource: ScimDocument = USER): string {
  try {
    applyPatch(resource, body);
  } catch (error) {
    expect(error).toBeInstanceOf(ScimError);
    expect(error).toMatchObject({ status: 400, scimType });
    return (error as ScimError).message;
  }
  throw new Error('applied');
}

describe('applyPatch: add (RFC 7644 §3.5.2.1)', () => {
  it('applies the RFC example without a path: a known address is not added twice, nickname is nickName', () => {
    const result = patched({ op: 'add', value: { emails: [{ value: 'babs@jensen.org', type: 'home' }], nickname: 'Babs' } });
    expect(result).toEqual({ ...USER, nickName: 'Babs' });
  });

  it('appends to a multi-valued attribute, a single object as a list of one', () => {
    const other = { value: 'b@other.org', type: 'other' };
    expect(patched({ op: 'add', path: 'emails', value: other }).emails).toEqual([WORK, HOME, other]);
    expect(patched({ op: 'add', path: 'emails', value: [other, HOME] }).emails).toEqual([WORK, HOME, other]);
    expect(patchedFrom(WITHOUT_EMAILS, { op: 'add', path: 'emails', value: [other] }).emails).toEqual([other]);
  });

  it('gives primary to an added primary element, taking it from the others', () => {
    const added = { value: 'new@example.com', type: 'work', primary: true };
    expect(patched({ op: 'add', path: 'emails', value: added }).emails).toEqual([{ ...WORK, primary: false }, HOME, added]);
    const entra = { value: 'new@example.com', type: 'work', primary: 'True' };
    expect(patched({ op: 'Add', path: 'emails', value: [entra] }).emails).toEqual([{ ...WORK, primary: false }, HOME, entra]);
    const notPrimary = { value: 'new@example.com', primary: false };
    expect(patched({ op: 'add', path: 'emails', value: notPrimary }).emails).toEqual([WORK, HOME, notPrimary]);
  });

  it('sets a singular attribute and merges into a complex one', () => {
    expect(patched({ op: 'add', path: 'title', value: 'Tour Guide' }).title).toBe('Tour Guide');
    expect(patched({ op: 'add', path: 'name.middleName', value: 'Jane' }).name).toEqual({ familyName: 'Jensen', givenName: 'Barbara', middleName: 'Jane' });
    expect(patched({ op: 'add', path: 'name', value: { GivenName: 'Babs', formatted: 'Babs Jensen' } }).name).toEqual({ familyName: 'Jensen', givenName: 'Babs', formatted: 'Babs Jensen' });
    const { name: _name, ...nameless } = USER;
    expect(patchedFrom(nameless, { op: 'add', path: 'name.givenName', value: 'Barbara' }).name).toEqual({ givenName: 'Barbara' });
  });

  it('adds an enterprise manager, as an object, a list of one, or the bare id Entra sends', () => {
    const { [ENTERPRISE_SCHEMA]: _enterprise, ...plain } = USER;
    expect(patchedFrom(plain, { op: 'Add', path: MANAGER, value: 'abc' })[ENTERPRISE_SCHEMA]).toEqual({ manager: { value: 'abc' } });
    expect(patchedFrom(plain, { op: 'add', path: MANAGER, value: [{ value: 'abc' }] })[ENTERPRISE_SCHEMA]).toEqual({ manager: { value: 'abc' } });
    expect(patchedFrom(plain, { op: 'add', path: MANAGER, value: { value: 'abc', $ref: '../Users/abc' } })[ENTERPRISE_SCHEMA]).toEqual({ manager: { value: 'abc', $ref: '../Users/abc' } });
    expect(patchedFrom(plain, { op: 'add', path: `${MANAGER}.value`, value: 'abc' })[ENTERPRISE_SCHEMA]).toEqual({ manager: { value: 'abc' } });
  });
});

describe('applyPatch: remove (RFC 7644 §3.5.2.2)', () => {
  it('removes the elements a filter selects, and nothing when it selects none', () => {
    expect(patched({ op: 'remove', path: 'emails[type eq "work" and value ew "example.com"]' }).emails).toEqual([HOME]);
    expect(patched({ op: 'remove', path: 'emails[type eq "other"]' })).toEqual(USER);
  });

  it('removes a whole attribute, dropping a list left empty', () => {
    expect(patched({ op: 'remove', path: 'emails' })).toEqual(WITHOUT_EMAILS);
    expect(patched({ op: 'remove', path: 'emails[type eq "work"]' }, { op: 'remove', path: 'emails[value eq "babs@jensen.org"]' })).toEqual(WITHOUT_EMAILS);
    expect(patched({ op: 'remove', path: 'title' })).toEqual(USER);
  });

  it('removes sub-attributes, dropping name when its last one goes', () => {
    expect(patched({ op: 'remove', path: 'name.givenName' }).name).toEqual({ familyName: 'Jensen' });
    expect(patched({ op: 'remove', path: 'name.givenName' }, { op: 'remove', path: 'name.familyName' })).not.toHaveProperty('name');
    expect(patched({ op: 'remove', path: 'emails[type eq "home"].type' }).emails).toEqual([WORK, { value: 'babs@jensen.org' }]);
    expect(patched({ op: 'remove', path: 'emails.primary' }).emails).toEqual([{ value: 'bjensen@example.com', type: 'work' }, HOME]);
  });

  it('removes the elements named by value, as Entra removes members', () => {
    expect(patched({ op: 'Remove', path: 'emails', value: [{ value: 'BABS@jensen.org' }] }).emails).toEqual([WORK]);
    expect(patched({ op: 'remove', path: 'emails', value: [{ value: 'nobody@example.com' }] })).toEqual(USER);
    expect(refusal(message({ op: 'remove', path: 'emails', value: [{ value: { nested: 1 } }] }), 'invalidValue')).toMatch(/\[\{"value": \.\.\.\}\]/);
  });

  it('removes the enterprise manager, by path or only when named, and the extension once empty', () => {
    expect(patched({ op: 'remove', path: MANAGER })[ENTERPRISE_SCHEMA]).toEqual({ department: 'Tour Operations' });
    expect(patched({ op: 'remove', path: MANAGER, value: [{ value: '26118915-6090-4610-87e4-49d8ca9f808d' }] })[ENTERPRISE_SCHEMA]).toEqual({ department: 'Tour Operations' });
    expect(patched({ op: 'remove', path: MANAGER, value: '26118915-6090-4610-87e4-49d8ca9f808d' })[ENTERPRISE_SCHEMA]).toEqual({ department: 'Tour Operations' });
    expect(patched({ op: 'remove', path: MANAGER, value: [{ value: 'someone-else' }] })).toEqual(USER);
    const emptied = patched({ op: 'remove', path: MANAGER }, { op: 'remove', path: `${ENTERPRISE_SCHEMA}:department` });
    expect(emptied).not.toHaveProperty([ENTERPRISE_SCHEMA]);
  });

  it('needs a path (noTarget)', () => {
    expect(refusal(message({ op: 'remove' }), 'noTarget')).toBe('operation 1 (remove): remove needs a "path"');
  });
});

describe('applyPatch: replace (RFC 7644 §3.5.2.3)', () => {
  const WORK_ADDRESS = { type: 'work', streetAddress: '100 Universal City Plaza', locality: 'Hollywood', region: 'CA', postalCode: '91608', country: 'USA' };
  const withAddress = { ...USER, addresses: [WORK_ADDRESS, { type: 'home', locality: 'Burbank' }] };

  it('replaces the elements a filter selects, as the RFC replaces a work address', () => {
    const value = {
      type: 'work',
      streetAddress: '911 Universal City Plaza',
      locality: 'Hollywood',
      region: 'CA',
      postalCode: '91608',
      country: 'US',
      formatted: '911 Universal City Plaza\nHollywood, CA 91608 US',
      primary: true,
    };
    expect(patchedFrom(withAddress, { op: 'replace', path: 'addresses[type eq "work"]', value }).addresses).toEqual([value, { type: 'home', locality: 'Burbank' }]);
  });

  it('replaces a sub-attribute of the selected elements, others unchanged', () => {
    const result = patchedFrom(withAddress, { op: 'replace', path: 'addresses[type eq "work"].streetAddress', value: '1010 Broadway Ave' });
    expect(result.addresses).toEqual([{ ...WORK_ADDRESS, streetAddress: '1010 Broadway Ave' }, { type: 'home', locality: 'Burbank' }]);
  });

  it('replaces without a path: the whole emails list, and nickName', () => {
    const emails = [
      { value: 'bjensen@example.com', type: 'work', primary: true },
      { value: 'babs@jensen.org', type: 'home' },
    ];
    expect(patched({ op: 'replace', value: { emails: emails.slice(1), nickName: 'Babs' } })).toEqual({ ...USER, emails: emails.slice(1), nickName: 'Babs' });
  });

  it('merges the sub-attributes given into a complex attribute, others unchanged', () => {
    expect(patched({ op: 'replace', path: 'name', value: { familyName: 'Jensen-Smith' } }).name).toEqual({ familyName: 'Jensen-Smith', givenName: 'Barbara' });
    expect(patched({ op: 'replace', path: MANAGER, value: 'new-manager' })[ENTERPRISE_SCHEMA]).toEqual({ department: 'Tour Operations', manager: { value: 'new-manager', displayName: 'John Smith' } });
  });

  it('adds an element with filter attribute and value for add or replace of a sub-attribute that selects nothing (Entra)', () => {
    expect(patchedFrom(WITHOUT_EMAILS, { op: 'Add', path: 'emails[type eq "work"].value', value: 'a@b.org' }).emails).toEqual([{ type: 'work', value: 'a@b.org' }]);
    expect(patched({ op: 'Replace', path: 'emails[type eq "other"].value', value: 'a@b.org' }).emails).toEqual([WORK, HOME, { type: 'other', value: 'a@b.org' }]);
  });

  it('refuses a filter that selects nothing otherwise (noTarget)', () => {
    expect(refusal(message({ op: 'replace', path: 'emails[type eq "other"]', value: { value: 'a@b.org' } }), 'noTarget')).toBe(
      'operation 1 (replace emails[type eq "other"]): no element of "emails" matches the filter',
    );
    expect(refusal(message({ op: 'replace', path: 'emails[type eq "other" and value co "x"].value', value: 'a' }), 'noTarget')).toMatch(/no element of "emails"/);
    expect(refusal(message({ op: 'add', path: 'emails[type sw "o"].value', value: 'a' }), 'noTarget')).toMatch(/no element of "emails"/);
  });

  it('merges into the selected elements for add, and replaces them whole for replace', () => {
    expect(patched({ op: 'add', path: 'emails[type eq "home"]', value: { display: 'Home' } }).emails).toEqual([WORK, { ...HOME, display: 'Home' }]);
    expect(patched({ op: 'replace', path: 'emails[type eq "home"]', value: { value: 'x@y.org' } }).emails).toEqual([WORK, { value: 'x@y.org' }]);
    expect(patched({ op: 'replace', path: 'emails[type eq "home"].primary', value: true }).emails).toEqual([{ ...WORK, primary: false }, { ...HOME, primary: true }]);
  });

  it('takes null, and an empty list, as unassigned', () => {
    expect(patched({ op: 'replace', path: 'active', value: null })).not.toHaveProperty('active');
    expect(patched({ op: 'replace', path: 'name', value: { givenName: null } }).name).toEqual({ familyName: 'Jensen' });
    expect(patched({ op: 'replace', path: 'emails', value: [] })).toEqual(WITHOUT_EMAILS);
    expect(patched({ op: 'replace', value: { emails: null } })).toEqual(WITHOUT_EMAILS);
  });
});

describe("applyPatch: Microsoft Entra ID's and Okta's documented requests", () => {
  it('updates multi-valued properties: the work address and the family name', () => {
    const result = applyPatch(USER, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [
        { op: 'Replace', path: 'emails[type eq "work"].value', value: 'updatedEmail@microsoft.com' },
        { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
      ],
    });
    expect(result).toEqual({ ...USER, emails: [{ ...WORK, value: 'updatedEmail@microsoft.com' }, HOME], name: { familyName: 'updatedFamilyName', givenName: 'Barbara' } });
  });

  it('updates a single-valued property', () => {
    const result = patched({ op: 'Replace', path: 'userName', value: '5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com' });
    expect(result).toEqual({ ...USER, userName: '5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com' });
  });

  it('disables a user, with a boolean or with the string Entra sometimes sends, kept as given', () => {
    expect(applyPatch(USER, { Operations: [{ op: 'Replace', path: 'active', value: false }], schemas: [PATCH_OP_SCHEMA] })).toEqual({ ...USER, active: false });
    expect(patched({ op: 'Replace', path: 'active', value: 'False' })).toEqual({ ...USER, active: 'False' });
  });

  it("deactivates as Okta does, replacing without a path", () => {
    expect(patched({ op: 'replace', value: { active: false } })).toEqual({ ...USER, active: false });
  });

  it('adds by prefixed, dotted and extension keys without a path', () => {
    const result = patched({
      op: 'Add',
      value: { 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber': '701984', 'name.honorificPrefix': 'Ms.', 'urn:ietf:params:scim:schemas:core:2.0:User:title': 'Guide' },
    });
    expect(result).toEqual({ ...USER, title: 'Guide', name: { ...(USER.name as object), honorificPrefix: 'Ms.' }, [ENTERPRISE_SCHEMA]: { ...(USER[ENTERPRISE_SCHEMA] as object), employeeNumber: '701984' } });
    const nested = patched({ op: 'replace', value: { [ENTERPRISE_SCHEMA.toLowerCase()]: { Department: 'Sales', manager: { value: 'm' } } } });
    expect(nested[ENTERPRISE_SCHEMA]).toEqual({ department: 'Sales', manager: { value: 'm', displayName: 'John Smith' } });
  });

  it('reads op, Operations and their members in any case', () => {
    expect(applyPatch(USER, { schemas: [PATCH_OP_SCHEMA], operations: [{ OP: 'REPLACE', Path: 'title', Value: 'x' }] }).title).toBe('x');
  });
});

describe('applyPatch: refusals', () => {
  it('refuses a body that is not a PatchOp message (invalidSyntax)', () => {
    expect(refusal(null, 'invalidSyntax')).toMatch(/JSON object/);
    expect(refusal([], 'invalidSyntax')).toMatch(/JSON object/);
    expect(refusal({ Operations: [{ op: 'add', path: 'title', value: 'x' }] }, 'invalidSyntax')).toBe(`"schemas" must list "${PATCH_OP_SCHEMA}"`);
    expect(refusal({ schemas: [USER_SCHEMA], Operations: [{ op: 'add', path: 'title', value: 'x' }] }, 'invalidSyntax')).toMatch(/"schemas" must list/);
    expect(refusal({ schemas: [PATCH_OP_SCHEMA] }, 'invalidSyntax')).toBe('"Operations" must be a non-empty array');
    expect(refusal({ schemas: [PATCH_OP_SCHEMA], Operations: [] }, 'invalidSyntax')).toBe('"Operations" must be a non-empty array');
    expect(refusal({ schemas: [PATCH_OP_SCHEMA], Operations: { op: 'add' } }, 'invalidSyntax')).toBe('"Operations" must be a non-empty array');
  });

  it(`takes ${MAX_PATCH_OPERATIONS} operations and refuses one more`, () => {
    const operations = (count: number) => Array.from({ length: count }, (_, index) => ({ op: 'replace', path: 'title', value: `t${index}` }));
    expect(applyPatch(USER, message(...operations(100))).title).toBe('t99');
    expect(refusal(message(...operations(101)), 'invalidSyntax')).toBe('at most 100 operations in one PATCH, not 101');
  });

  it('refuses an operation that is not add, replace or remove (invalidSyntax)', () => {
    expect(refusal(message({ op: 'move', path: 'title' }), 'invalidSyntax')).toBe('operation 1: "op" must be add, replace or remove, not "move"');
    expect(refusal(message({ path: 'title', value: 'x' }), 'invalidSyntax')).toBe('operation 1: "op" must be add, replace or remove, not missing');
    expect(refusal(message({ op: 'add', path: 'title', value: 'x' }, 'add'), 'invalidSyntax')).toBe('operation 2 is not an object');
  });

  it('refuses add or replace without a value, or with a value object that is not one (invalidValue)', () => {
    expect(refusal(message({ op: 'add', path: 'title' }), 'invalidValue')).toBe('operation 1: add needs a "value"');
    expect(refusal(message({ op: 'replace', value: 'x' }), 'invalidValue')).toMatch(/without a "path", "value" must be an object of attributes/);
    expect(refusal(message({ op: 'replace', path: 'name', value: 'x' }), 'invalidValue')).toMatch(/"name" is complex: give an object of its sub-attributes/);
  });

  it('refuses a path that is not one (invalidPath)', () => {
    expect(refusal(message({ op: 'add', path: 'nickname2', value: 'x' }), 'invalidPath')).toBe('operation 1 (add nickname2): unknown attribute "nickname2" at character 1 of the path');
    expect(refusal(message({ op: 'add', path: 7, value: 'x' }), 'invalidPath')).toBe('operation 1: "path" must be a string');
    expect(refusal(message({ op: 'add', path: 'emails.value', value: 'x' }), 'invalidPath')).toMatch(/"emails.value" would change every element: select them with a filter/);
  });

  it('refuses unknown attributes and sub-attributes in a value, naming them (invalidValue)', () => {
    expect(refusal(message({ op: 'add', value: { title: 'x', favouriteColour: 'blue' } }), 'invalidValue')).toBe('operation 1 (add): unknown attribute "favouriteColour" in "value"');
    expect(refusal(message({ op: 'add', value: { [ENTERPRISE_SCHEMA]: { shoeSize: 9 } } }), 'invalidValue')).toMatch(/unknown attribute "shoeSize" in "value"/);
    expect(refusal(message({ op: 'add', value: { [ENTERPRISE_SCHEMA]: 'x' } }), 'invalidValue')).toMatch(/must be an object of enterprise attributes/);
    expect(refusal(message({ op: 'add', path: 'name', value: { nick: 'x' } }), 'invalidValue')).toMatch(/unknown sub-attribute "nick" of "name"/);
    expect(refusal(message({ op: 'add', path: 'emails', value: [{ value: 'a@b', label: 'x' }] }), 'invalidValue')).toMatch(/unknown sub-attribute "label" of "emails"/);
  });

  it.each(['id', 'ID', 'meta', 'meta.lastModified', 'groups', 'groups[value eq "x"]', 'schemas', 'urn:ietf:params:scim:schemas:core:2.0:User:id'])('refuses writing %s (mutability)', (path) => {
    expect(refusal(message({ op: 'replace', path, value: 'x' }), 'mutability')).toMatch(/is set by the service and cannot be changed$/);
    expect(refusal(message({ op: 'remove', path }), 'mutability')).toMatch(/is set by the service/);
  });

  it('refuses the same names as keys of a value object (mutability)', () => {
    expect(refusal(message({ op: 'replace', value: { active: false, id: 'other' } }), 'mutability')).toMatch(/"id" is set by the service/);
    expect(refusal(message({ op: 'replace', value: { schemas: [USER_SCHEMA] } }), 'mutability')).toMatch(/"schemas" is set by the service/);
  });

  it('refuses a password, saying a SCIM client never sets one (mutability)', () => {
    expect(refusal(message({ op: 'replace', path: 'password', value: 'hunter2hunter2' }), 'mutability')).toMatch(/a SCIM client never sets a password/);
    expect(refusal(message({ op: 'add', value: { Password: 'hunter2hunter2' } }), 'mutability')).toMatch(/a SCIM client never sets a password/);
  });

  it('applies all operations or none, naming the one that failed', () => {
    const body = message({ op: 'replace', path: 'title', value: 'x' }, { op: 'replace', path: 'id', value: 'y' });
    expect(refusal(body, 'mutability')).toBe('operation 2 (replace id): "id" is set by the service and cannot be changed');
    expect(USER).not.toHaveProperty('title');
  });
});

describe('applyPatch: properties', () => {
  const paths = fc.constantFrom('title', 'name', 'name.givenName', 'emails', 'emails[type eq "work"]', 'emails[type eq "work"].value', 'emails.value', MANAGER, `${MANAGER}.value`, 'id', 'nope', 'emails[');
  const values = fc.oneof(fc.constant(undefined), fc.constant(null), fc.string({ maxLength: 4 }), fc.boolean(), fc.constantFrom({ value: 'v' }, [{ value: 'v', primary: true }], [], {}, { givenName: 'g' }, [{ type: 'work' }]));
  const operation = fc.record({ op: fc.constantFrom('add', 'Replace', 'remove', 'copy'), path: fc.option(paths, { nil: undefined }), value: values });

  it('never changes its input, and answers any operations with a document or a 400 ScimError', () => {
    fc.assert(
      fc.property(fc.array(operation, { minLength: 1, maxLength: 6 }), (operations) => {
        const before = structuredClone(USER);
        try {
          const result = applyPatch(USER, message(...operations));
          expect(JSON.parse(JSON.stringify(result))).toEqual(result);
        } catch (error) {
          expect(error).toBeInstanceOf(ScimError);
          expect((error as ScimError).status).toBe(400);
        }
        expect(USER).toEqual(before);
      }),
      { numRuns: 1000 },
    );
  });
});
