import { describe, expect, it } from 'vitest';
import { parsePath } from '../../../src/auth/scim/patch-path.js';
import { ScimError } from '../../../src/auth/scim/scim-error.js';
import { ENTERPRISE_SCHEMA } from '../../../src/auth/scim/user-schema.js';

const typeIs = (type: string) => ({ kind: 'compare', op: 'eq', attribute: 'type', value: type });

/** The detail of the 400 invalidPath that parsePath throws for `text`. */
function refusal(text: string): string {
  try {
    parsePath(text);
  } catch (error) {
    expect(error).toBeInstanceOf(ScimError);
    expect(error).toMatchObject({ status: 400, scimType: 'invalidPath' });
    return (error as ScimError).message;
  }
  throw new Error(`parsed: ${text}`);
}

describe('parsePath', () => {
  it.each([
    ['active', { attribute: 'active' }],
    ['name.givenName', { attribute: 'name', subAttribute: 'givenName' }],
    ['emails[type eq "work"].value', { attribute: 'emails', filter: typeIs('work'), subAttribute: 'value' }],
    ['emails[type eq "work"]', { attribute: 'emails', filter: typeIs('work') }],
    ['emails.value', { attribute: 'emails', subAttribute: 'value' }],
    ['urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager', { attribute: `${ENTERPRISE_SCHEMA}:manager` }],
    ['urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value', { attribute: `${ENTERPRISE_SCHEMA}:manager`, subAttribute: 'value' }],
    ['urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department', { attribute: `${ENTERPRISE_SCHEMA}:department` }],
    ['urn:ietf:params:scim:schemas:core:2.0:User:userName', { attribute: 'userName' }],
    ['urn:ietf:params:scim:schemas:core:2.0:User:emails[type eq "work"].value', { attribute: 'emails', filter: typeIs('work'), subAttribute: 'value' }],
  ])('%s', (text, expected) => {
    expect(parsePath(text)).toEqual(expected);
  });

  it('reads the path examples of RFC 7644 §3.5.2 on the attributes a User has', () => {
    expect(parsePath('name.familyName')).toEqual({ attribute: 'name', subAttribute: 'familyName' });
    expect(parsePath('addresses[type eq "work"]')).toEqual({ attribute: 'addresses', filter: typeIs('work') });
    const value = { kind: 'compare', op: 'eq', attribute: 'value', value: '2819c223-7f76-453a-919d-413861904646' };
    expect(parsePath('emails[value eq "2819c223-7f76-453a-919d-413861904646"]')).toEqual({ attribute: 'emails', filter: value });
    expect(parsePath('emails[value eq "2819c223-7f76-453a-919d-413861904646"].display')).toEqual({ attribute: 'emails', filter: value, subAttribute: 'display' });
  });

  it('reads names, operators and the schema URN without case, returning canonical names', () => {
    expect(parsePath('NAME.GIVENNAME')).toEqual({ attribute: 'name', subAttribute: 'givenName' });
    expect(parsePath('Emails[Type EQ "work"].Value')).toEqual({ attribute: 'emails', filter: typeIs('work'), subAttribute: 'value' });
    expect(parsePath('URN:IETF:PARAMS:SCIM:SCHEMAS:EXTENSION:ENTERPRISE:2.0:USER:Manager')).toEqual({ attribute: `${ENTERPRISE_SCHEMA}:manager` });
    expect(parsePath('phonenumbers[TYPE eq "mobile" AND primary EQ TRUE]')).toEqual({
      attribute: 'phoneNumbers',
      filter: { kind: 'and', left: typeIs('mobile'), right: { kind: 'compare', op: 'eq', attribute: 'primary', value: true } },
    });
  });

  it('leaves refusing attributes a client may not write to the PATCH', () => {
    expect(parsePath('id')).toEqual({ attribute: 'id' });
    expect(parsePath('meta.lastModified')).toEqual({ attribute: 'meta', subAttribute: 'lastModified' });
  });

  it.each([
    ['', 'the path is empty'],
    ['nickname2', 'unknown attribute "nickname2" at character 1 of the path'],
    ['schemas', 'unknown attribute "schemas" at character 1 of the path'],
    ['name.nick', 'unknown sub-attribute "nick" of "name" at character 1 of the path'],
    ['name.givenName.x', 'unknown attribute "name.givenName.x" at character 1 of the path'],
    ['active.value', 'unknown sub-attribute "value" of "active" at character 1 of the path'],
    ['urn:example:User:title', 'unknown schema "urn:example:User" at character 1 of the path'],
    ['emails[type eq "work"].foo', 'unknown sub-attribute "foo" of "emails" at character 23 of the path'],
    ['emails[type eq "work"].value.extra', 'unknown sub-attribute "value.extra" of "emails" at character 23 of the path'],
    ['emails[type eq "work"]value', 'unexpected "value" at character 23 of the path'],
    ['emails[type eq "work"].value eq "x"', 'unexpected "eq" at character 30 of the path'],
    ['emails[type eq "work"', 'expected "]" at the end of the path'],
    ['emails[type eq]', 'expected a value ("text", a number, true, false or null), found "]" at character 15 of the path'],
    ['emails[nope eq "x"]', 'unknown sub-attribute "nope" of "emails" at character 8 of the path'],
    ['name[givenName eq "x"]', '"name" is not a multi-valued complex attribute, so it takes no [filter] at character 5 of the path'],
    ['title eq "x"', 'unexpected "eq" at character 7 of the path'],
    ['(title)', 'expected an attribute name, found "(" at character 1 of the path'],
  ])('refuses %j with a 400 invalidPath', (text, detail) => {
    expect(refusal(text)).toBe(detail);
  });

  it('bounds the value filter as filters are bounded', () => {
    const eleven = Array.from({ length: 11 }, () => 'type pr').join(' or ');
    expect(parsePath('emails[((((type pr))))]')).toMatchObject({ attribute: 'emails' });
    expect(refusal(`emails[${eleven}]`)).toBe('the path has more than 10 comparisons');
    expect(refusal(`emails[(((((type pr)))))]`)).toMatch(/^the path nests deeper than 5 levels/);
    expect(refusal(`emails[value eq "${'a'.repeat(1000)}"]`)).toBe('the path is longer than 1000 characters');
  });
});
