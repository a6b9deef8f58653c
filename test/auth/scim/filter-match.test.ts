import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchesFilter } from '../../../src/auth/scim/filter-match.js';
import { parseFilter } from '../../../src/auth/scim/filter-parse.js';
import { ENTERPRISE_SCHEMA } from '../../../src/auth/scim/user-schema.js';

const WORK = { type: 'work', value: 'bjensen@example.com', primary: true };

/** Whether the element at a PATCH value path, `emails[...]`, satisfies `inner`. */
const selects = (element: unknown, inner: string) => {
  const filter = parseFilter(`emails[${inner}]`);
  if (filter.kind !== 'valuePath') throw new Error('not a value path');
  return matchesFilter(element, filter.filter);
};

describe('matchesFilter on an element of a multi-valued attribute', () => {
  it('compares strings without case', () => {
    expect(selects(WORK, 'type eq "work"')).toBe(true);
    expect(selects(WORK, 'type eq "WORK"')).toBe(true);
    expect(selects({ type: 'Work' }, 'type eq "work"')).toBe(true);
    expect(selects(WORK, 'type eq "home"')).toBe(false);
    expect(selects(WORK, 'type ne "home"')).toBe(true);
    expect(selects(WORK, 'type ne "Work"')).toBe(false);
  });

  it('reads co, sw and ew on strings, without case', () => {
    expect(selects(WORK, 'value co "@EXAMPLE"')).toBe(true);
    expect(selects(WORK, 'value co "@other"')).toBe(false);
    expect(selects(WORK, 'value sw "BJensen"')).toBe(true);
    expect(selects(WORK, 'value sw "example"')).toBe(false);
    expect(selects(WORK, 'value ew ".COM"')).toBe(true);
    expect(selects(WORK, 'value ew ".org"')).toBe(false);
  });

  it('orders strings lexically (without case) and numbers numerically', () => {
    expect(selects(WORK, 'value gt "a"')).toBe(true);
    expect(selects(WORK, 'value gt "C"')).toBe(false);
    expect(selects(WORK, 'value lt "C"')).toBe(true);
    expect(selects(WORK, 'value ge "BJENSEN@EXAMPLE.COM"')).toBe(true);
    expect(selects(WORK, 'value le "bjensen@example.com"')).toBe(true);
    expect(selects(WORK, 'value lt "bjensen@example.com"')).toBe(false);
    const numbered = { value: 10 };
    expect(selects(numbered, 'value gt 9')).toBe(true);
    expect(selects(numbered, 'value gt 10')).toBe(false);
    expect(selects(numbered, 'value ge 10')).toBe(true);
    expect(selects(numbered, 'value lt 10.5')).toBe(true);
    expect(selects(numbered, 'value le 9')).toBe(false);
    expect(selects(numbered, 'value eq 10')).toBe(true);
    expect(selects(numbered, 'value co 1')).toBe(false);
  });

  it('compares booleans exactly, taking "True" and "False" as Entra sends them', () => {
    expect(selects(WORK, 'primary eq true')).toBe(true);
    expect(selects(WORK, 'primary eq false')).toBe(false);
    expect(selects({ primary: 'True' }, 'primary eq true')).toBe(true);
    expect(selects({ primary: 'FALSE' }, 'primary eq false')).toBe(true);
    expect(selects({ primary: 'False' }, 'primary eq true')).toBe(false);
    expect(selects({ primary: 'False' }, 'primary ne true')).toBe(true);
    expect(selects({ primary: 'yes' }, 'primary eq true')).toBe(false);
    expect(selects({ primary: 1 }, 'primary eq true')).toBe(false);
    expect(selects(WORK, 'primary gt false')).toBe(false);
  });

  it('finds a value of another type unequal, never matching by conversion', () => {
    expect(selects({ value: '10' }, 'value eq 10')).toBe(false);
    expect(selects({ value: '10' }, 'value ne 10')).toBe(true);
    expect(selects({ value: 10 }, 'value eq "10"')).toBe(false);
    expect(selects({ value: true }, 'value eq "true"')).toBe(false);
  });

  it('takes pr as present and not null, empty string or empty array', () => {
    expect(selects(WORK, 'value pr')).toBe(true);
    expect(selects({ primary: false }, 'primary pr')).toBe(true);
    expect(selects({ display: 0 }, 'display pr')).toBe(true);
    expect(selects({ display: '' }, 'display pr')).toBe(false);
    expect(selects({ display: null }, 'display pr')).toBe(false);
    expect(selects({ display: [] }, 'display pr')).toBe(false);
    expect(selects({}, 'display pr')).toBe(false);
  });

  it('finds a missing or null attribute satisfying ne alone', () => {
    for (const element of [{}, { display: null }]) {
      for (const op of ['eq', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le']) expect(selects(element, `display ${op} "x"`)).toBe(false);
      expect(selects(element, 'display ne "x"')).toBe(true);
      expect(selects(element, 'display eq 1')).toBe(false);
      expect(selects(element, 'display eq true')).toBe(false);
      expect(selects(element, 'display ne false')).toBe(true);
    }
  });

  it('takes eq null as absent and ne null as present', () => {
    expect(selects({}, 'display eq null')).toBe(true);
    expect(selects({ display: null }, 'display eq null')).toBe(true);
    expect(selects({ display: 'x' }, 'display eq null')).toBe(false);
    expect(selects({ display: 'x' }, 'display ne null')).toBe(true);
    expect(selects({}, 'display ne null')).toBe(false);
    expect(selects({}, 'display gt null')).toBe(false);
  });

  it('combines with and, or and not', () => {
    expect(selects(WORK, 'type eq "work" and value co "@example.com"')).toBe(true);
    expect(selects(WORK, 'type eq "work" and value co "@example.org"')).toBe(false);
    expect(selects(WORK, 'type eq "home" or value co "@example.com"')).toBe(true);
    expect(selects(WORK, 'type eq "home" or value co "@example.org"')).toBe(false);
    expect(selects(WORK, 'not (type eq "home")')).toBe(true);
    expect(selects(WORK, 'not (type eq "work") or (primary eq true and not (display pr))')).toBe(true);
  });

  it('reads the element\'s keys without case, and nothing from what is not an object', () => {
    expect(selects({ Type: 'work', VALUE: 'a@b' }, 'type eq "work" and value eq "a@b"')).toBe(true);
    for (const element of [null, 'work', 7, ['work'], undefined]) {
      expect(selects(element, 'type eq "work"')).toBe(false);
      expect(selects(element, 'type ne "work"')).toBe(true);
    }
  });
});

describe('matchesFilter on a whole User', () => {
  const user = {
    userName: 'bjensen',
    title: 'Tour Guide',
    name: { givenName: 'Barbara', familyName: 'Jensen' },
    emails: [WORK, { type: 'home', value: 'babs@jensen.org' }],
    [ENTERPRISE_SCHEMA]: { department: 'Tour Operations', manager: { value: '26118915' } },
  };
  const matches = (text: string) => matchesFilter(user, parseFilter(text));

  it('reads sub-attributes, and multi-valued attributes by any of their values', () => {
    expect(matches('name.familyName co "sen"')).toBe(true);
    expect(matches('emails co "jensen.org"')).toBe(true);
    expect(matches('emails.type eq "home"')).toBe(true);
    expect(matches('emails.type eq "other"')).toBe(false);
    expect(matches('emails.type ne "home"')).toBe(false);
    expect(matches('emails.type ne "other"')).toBe(true);
    expect(matches('phoneNumbers pr')).toBe(false);
  });

  it('holds a value path to one element, unlike comparisons of the attribute as a whole', () => {
    expect(matches('emails[type eq "work" and value co "@example.com"]')).toBe(true);
    expect(matches('emails[type eq "home" and value co "@example.com"]')).toBe(false);
    expect(matches('emails.type eq "home" and emails.value co "@example.com"')).toBe(true);
  });

  it('finds enterprise attributes under their schema URN', () => {
    expect(matches('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "tour operations"')).toBe(true);
    expect(matches('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value eq "26118915"')).toBe(true);
    expect(matches('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:costCenter pr')).toBe(false);
    expect(matchesFilter({}, parseFilter('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department ne "x"'))).toBe(true);
  });

  it('reads the RFC 7644 §3.4.2.2 examples as their words say', () => {
    expect(matches('title pr and userType eq "Employee"')).toBe(false);
    expect(matches('title pr or userType eq "Intern"')).toBe(true);
    expect(matches('userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")')).toBe(false);
    expect(matches('userName sw "J"')).toBe(false);
    expect(matches('userName sw "B"')).toBe(true);
  });
});

describe('matchesFilter: properties', () => {
  const json = fc.oneof(fc.string({ maxLength: 6 }), fc.integer({ min: -3, max: 3 }), fc.boolean(), fc.constantFrom('True', 'false', '', null), fc.constant([]));
  const element = fc.dictionary(fc.constantFrom('type', 'value', 'primary', 'display'), json, { maxKeys: 4 });
  const compared = fc.oneof(fc.string({ maxLength: 6 }).map((text) => JSON.stringify(text)), fc.integer({ min: -3, max: 3 }).map(String), fc.constantFrom('true', 'false', 'null'));
  const attribute = fc.constantFrom('type', 'value', 'primary', 'display');

  it('answers ne as the opposite of eq, and not as the opposite of the filter', () => {
    fc.assert(
      fc.property(element, attribute, compared, fc.constantFrom('eq', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le', 'pr'), (item, name, value, op) => {
        expect(selects(item, `${name} ne ${value}`)).toBe(!selects(item, `${name} eq ${value}`));
        const inner = op === 'pr' ? `${name} pr` : `${name} ${op} ${value}`;
        expect(selects(item, `not (${inner})`)).toBe(!selects(item, inner));
      }),
      { numRuns: 1000 },
    );
  });

  it('answers and/or as the logical and/or of the parts', () => {
    fc.assert(
      fc.property(element, attribute, compared, attribute, compared, (item, first, a, second, b) => {
        const [left, right] = [`${first} eq ${a}`, `${second} ge ${b}`];
        expect(selects(item, `${left} and ${right}`)).toBe(selects(item, left) && selects(item, right));
        expect(selects(item, `${left} or ${right}`)).toBe(selects(item, left) || selects(item, right));
      }),
      { numRuns: 500 },
    );
  });
});
