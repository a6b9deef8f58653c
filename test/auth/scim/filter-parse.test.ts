import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ScimFilter } from '../../../src/auth/scim/scim-filter.js';
import { FILTER_LIMITS, parseFilter } from '../../../src/auth/scim/filter-parse.js';
import { ScimError } from '../../../src/auth/scim/scim-error.js';
import { ENTERPRISE_SCHEMA } from '../../../src/auth/scim/user-schema.js';

const compare = (attribute: string, op: string, value: unknown): ScimFilter => ({ kind: 'compare', op, attribute, value }) as ScimFilter;
const present = (attribute: string): ScimFilter => ({ kind: 'present', attribute });
const and = (left: ScimFilter, right: ScimFilter): ScimFilter => ({ kind: 'and', left, right });
const or = (left: ScimFilter, right: ScimFilter): ScimFilter => ({ kind: 'or', left, right });
const not = (filter: ScimFilter): ScimFilter => ({ kind: 'not', filter });

/** The error parseFilter throws for `text`, checked to be a 400 invalidFilter. */
function refusal(text: string): string {
  try {
    parseFilter(text);
  } catch (error) {
    expect(error).toBeInstanceOf(ScimError);
    expect(error).toMatchObject({ status: 400, scimType: 'invalidFilter' });
    return (error as ScimError).message;
  }
  throw new Error(`parsed: ${text}`);
}

describe('parseFilter: the examples of RFC 7644 §3.4.2.2 that use attributes this service has', () => {
  it.each([
    ['userName eq "bjensen"', compare('userName', 'eq', 'bjensen')],
    ['name.familyName co "O\'Malley"', compare('name.familyName', 'co', "O'Malley")],
    ['userName sw "J"', compare('userName', 'sw', 'J')],
    ['urn:ietf:params:scim:schemas:core:2.0:User:userName sw "J"', compare('userName', 'sw', 'J')],
    ['title pr', present('title')],
    ['meta.lastModified gt "2011-05-13T04:42:34Z"', compare('meta.lastModified', 'gt', '2011-05-13T04:42:34Z')],
    ['meta.lastModified ge "2011-05-13T04:42:34Z"', compare('meta.lastModified', 'ge', '2011-05-13T04:42:34Z')],
    ['meta.lastModified lt "2011-05-13T04:42:34Z"', compare('meta.lastModified', 'lt', '2011-05-13T04:42:34Z')],
    ['meta.lastModified le "2011-05-13T04:42:34Z"', compare('meta.lastModified', 'le', '2011-05-13T04:42:34Z')],
    ['title pr and userType eq "Employee"', and(present('title'), compare('userType', 'eq', 'Employee'))],
    ['title pr or userType eq "Intern"', or(present('title'), compare('userType', 'eq', 'Intern'))],
    [
      'userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")',
      and(compare('userType', 'eq', 'Employee'), or(compare('emails.value', 'co', 'example.com'), compare('emails.value', 'co', 'example.org'))),
    ],
    [
      'userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")',
      and(compare('userType', 'ne', 'Employee'), not(or(compare('emails.value', 'co', 'example.com'), compare('emails.value', 'co', 'example.org')))),
    ],
    ['userType eq "Employee" and (emails.type eq "work")', and(compare('userType', 'eq', 'Employee'), compare('emails.type', 'eq', 'work'))],
    [
      'userType eq "Employee" and emails[type eq "work" and value co "@example.com"]',
      and(compare('userType', 'eq', 'Employee'), { kind: 'valuePath', attribute: 'emails', filter: and(compare('type', 'eq', 'work'), compare('value', 'co', '@example.com')) }),
    ],
  ])('%s', (text, expected) => {
    expect(parseFilter(text)).toEqual(expected);
  });

  it('refuses the examples naming attributes this service does not have (schemas, ims)', () => {
    expect(refusal('schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"')).toBe('unknown attribute "schemas" at character 1 of the filter');
    expect(refusal('emails[type eq "work" and value co "@example.com"] or ims[type eq "xmpp" and value co "@foo.com"]')).toMatch(/unknown attribute "ims" at character 55/);
  });
});

describe('parseFilter: grammar', () => {
  it('reads Microsoft Entra\'s emails[type eq "work"].value eq "x" as one condition on the same address', () => {
    expect(parseFilter('emails[type eq "work"].value eq "a@b.example"')).toEqual({
      kind: 'valuePath',
      attribute: 'emails',
      filter: and(compare('type', 'eq', 'work'), compare('value', 'eq', 'a@b.example')),
    });
  });

  it('binds and tighter than or, both from the left, and lets parentheses override', () => {
    const [a, b, c] = [present('title'), present('nickName'), present('locale')];
    expect(parseFilter('title pr or nickName pr and locale pr')).toEqual(or(a, and(b, c)));
    expect(parseFilter('title pr and nickName pr or locale pr')).toEqual(or(and(a, b), c));
    expect(parseFilter('title pr or nickName pr or locale pr')).toEqual(or(or(a, b), c));
    expect(parseFilter('title pr and nickName pr and locale pr')).toEqual(and(and(a, b), c));
    expect(parseFilter('(title pr or nickName pr) and locale pr')).toEqual(and(or(a, b), c));
    expect(parseFilter('not (title pr) and locale pr')).toEqual(and(not(a), c));
  });

  it('reads operators, logical words, literals and attribute names without case, returning canonical names', () => {
    expect(parseFilter('USERNAME EQ "Bjensen"')).toEqual(compare('userName', 'eq', 'Bjensen'));
    expect(parseFilter('Title PR And NOT (nickname Sw "x") Or name.GIVENNAME ew "a"')).toEqual(
      or(and(present('title'), not(compare('nickName', 'sw', 'x'))), compare('name.givenName', 'ew', 'a')),
    );
    expect(parseFilter('URN:IETF:PARAMS:SCIM:SCHEMAS:CORE:2.0:USER:externalid eq "x"')).toEqual(compare('externalId', 'eq', 'x'));
    expect(parseFilter('Emails[TYPE eq "work"]')).toEqual({ kind: 'valuePath', attribute: 'emails', filter: compare('type', 'eq', 'work') });
    expect(parseFilter('active eq TRUE')).toEqual(compare('active', 'eq', true));
    expect(parseFilter('active eq False')).toEqual(compare('active', 'eq', false));
    expect(parseFilter('title eq Null')).toEqual(compare('title', 'eq', null));
  });

  it('reads every comparison operator and pr', () => {
    for (const op of ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le']) expect(parseFilter(`title ${op} "x"`)).toEqual(compare('title', op, 'x'));
  });

  it('reads string values as JSON, escapes included, and numbers as JSON numbers', () => {
    expect(parseFilter(String.raw`title eq "a \"quoted\" \\ back\u00e9 \n"`)).toEqual(compare('title', 'eq', 'a "quoted" \\ backé \n'));
    expect(parseFilter('title eq "(not) [and] or"')).toEqual(compare('title', 'eq', '(not) [and] or'));
    expect(parseFilter('title eq ""')).toEqual(compare('title', 'eq', ''));
    expect(parseFilter('title gt -1.5e2')).toEqual(compare('title', 'gt', -150));
    expect(parseFilter('title lt 0')).toEqual(compare('title', 'lt', 0));
  });

  it('takes an attribute of a multi-valued complex attribute alone as its value', () => {
    expect(parseFilter('emails eq "a@b"')).toEqual(compare('emails.value', 'eq', 'a@b'));
    expect(parseFilter('phoneNumbers pr')).toEqual(present('phoneNumbers.value'));
  });

  it('names enterprise attributes by their URN, kept in the canonical name', () => {
    expect(parseFilter('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "Sales"')).toEqual(compare(`${ENTERPRISE_SCHEMA}:department`, 'eq', 'Sales'));
    expect(parseFilter('urn:ietf:params:scim:schemas:extension:Enterprise:2.0:user:EMPLOYEENUMBER pr')).toEqual(present(`${ENTERPRISE_SCHEMA}:employeeNumber`));
    expect(parseFilter('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.VALUE eq "26118915"')).toEqual(compare(`${ENTERPRISE_SCHEMA}:manager.value`, 'eq', '26118915'));
  });

  it('reads id, externalId and meta.created, meta.lastModified, meta.resourceType', () => {
    expect(parseFilter('id eq "1" or externalId eq "2"')).toEqual(or(compare('id', 'eq', '1'), compare('externalId', 'eq', '2')));
    expect(parseFilter('meta.created ge "2024-01-01T00:00:00Z" and meta.resourcetype eq "User"')).toEqual(
      and(compare('meta.created', 'ge', '2024-01-01T00:00:00Z'), compare('meta.resourceType', 'eq', 'User')),
    );
  });

  it('allows not and parentheses inside a value path, names there staying relative', () => {
    expect(parseFilter('addresses[not (type eq "home") and (locality sw "Holly")]')).toEqual({
      kind: 'valuePath',
      attribute: 'addresses',
      filter: and(not(compare('type', 'eq', 'home')), compare('locality', 'sw', 'Holly')),
    });
  });

  it('does without spaces around parentheses and quotes', () => {
    expect(parseFilter('(title pr)and(nickName eq"x")')).toEqual(and(present('title'), compare('nickName', 'eq', 'x')));
  });
});

describe('parseFilter: refusals, each a 400 invalidFilter naming the problem and where', () => {
  it.each([
    ['', 'the filter is empty'],
    ['   ', 'the filter is empty'],
    ['nickname2 eq "x"', 'unknown attribute "nickname2" at character 1 of the filter'],
    ['department eq "x"', 'unknown attribute "department" at character 1 of the filter'],
    ['name.nick eq "x"', 'unknown sub-attribute "nick" of "name" at character 1 of the filter'],
    ['name.givenName.first eq "x"', 'unknown attribute "name.givenName.first" at character 1 of the filter'],
    ['userName.value eq "x"', 'unknown sub-attribute "value" of "userName" at character 1 of the filter'],
    ['meta.location pr', 'unknown sub-attribute "location" of "meta" at character 1 of the filter'],
    ['urn:example:User:title pr', 'unknown schema "urn:example:User" at character 1 of the filter'],
    ['urn:ietf:params:scim:schemas:core:2.0:User:department pr', 'unknown attribute "urn:ietf:params:scim:schemas:core:2.0:User:department" at character 1 of the filter'],
    ['name eq "Barbara"', '"name" is complex: name one of its sub-attributes at character 1 of the filter'],
    ['userName is "x"', 'unknown operator "is" at character 10 of the filter'],
    ['userName eq', 'expected a value ("text", a number, true, false or null) at the end of the filter'],
    ['userName eq bjensen', '"bjensen" is not a value (strings take double quotes) at character 13 of the filter'],
    ['userName eq 01', '"01" is not a value (strings take double quotes) at character 13 of the filter'],
    ['userName eq "bjensen" extra', 'unexpected "extra" at character 23 of the filter'],
    ['userName eq "bjensen")', 'unexpected ")" at character 22 of the filter'],
    ['userName eq "bjensen', 'unterminated string at character 13 of the filter'],
    [String.raw`userName eq "end\"`, 'unterminated string at character 13 of the filter'],
    [String.raw`userName eq "a\q"`, 'invalid string (bad escape or control character) at character 13 of the filter'],
    ['(title pr', 'expected ")" at the end of the filter'],
    ['title pr and', 'expected an attribute name at the end of the filter'],
    ['title pr or or nickName pr', 'unknown attribute "or" at character 13 of the filter'],
    ['not title pr', 'expected "(", found "title" at character 5 of the filter'],
    ['"x" eq title', 'expected an attribute name, found ""x"" at character 1 of the filter'],
    ['emails[type eq "work"', 'expected "]" at the end of the filter'],
    ['emails[type eq "work"].value', 'expected an operator (eq, ne, co, sw, ew, gt, ge, lt, le, pr) at the end of the filter'],
    ['emails[emails.type eq "work"]', 'unknown sub-attribute "emails.type" of "emails" at character 8 of the filter'],
    ['emails[value[type eq "x"]]', 'expected an operator (eq, ne, co, sw, ew, gt, ge, lt, le, pr), found "[" at character 13 of the filter'],
    ['name[givenName eq "x"]', '"name" is not a multi-valued complex attribute, so it takes no [filter] at character 5 of the filter'],
    ['emails.value[type eq "x"]', '"emails" is not a multi-valued complex attribute, so it takes no [filter] at character 13 of the filter'],
  ])('%j', (text, detail) => {
    expect(refusal(text)).toBe(detail);
  });
});

describe('parseFilter: complexity bounds, refused before anything is evaluated', () => {
  it(`takes ${FILTER_LIMITS.length} characters and refuses one more`, () => {
    const padded = (length: number) => `userName eq "${'a'.repeat(length - 'userName eq ""'.length)}"`;
    expect(padded(1000)).toHaveLength(1000);
    expect(parseFilter(padded(1000))).toMatchObject({ kind: 'compare', attribute: 'userName' });
    expect(refusal(padded(1001))).toBe('the filter is longer than 1000 characters');
    expect(refusal(`${'('.repeat(100_000)}`)).toBe('the filter is longer than 1000 characters');
  });

  it(`takes ${FILTER_LIMITS.comparisons} comparisons and refuses an eleventh, those inside value paths counted`, () => {
    const presents = (count: number) => Array.from({ length: count }, () => 'title pr');
    expect(() => parseFilter(presents(10).join(' or '))).not.toThrow();
    expect(refusal(presents(11).join(' or '))).toBe('the filter has more than 10 comparisons');
    const inPath = 'emails[type eq "work" and value co "@x"]';
    expect(() => parseFilter([...presents(8), inPath].join(' and '))).not.toThrow();
    expect(refusal([...presents(9), inPath].join(' and '))).toBe('the filter has more than 10 comparisons');
  });

  it(`takes nesting ${FILTER_LIMITS.depth} deep and refuses a sixth level, whether (), not () or []`, () => {
    expect(parseFilter('(((((title pr)))))')).toEqual(present('title'));
    expect(refusal('((((((title pr))))))')).toBe('the filter nests deeper than 5 levels of (), not () and [] (at character 6)');
    const mixed = 'not ((not ((emails[type eq "work"]))))';
    expect(parseFilter(mixed)).toEqual(not(not({ kind: 'valuePath', attribute: 'emails', filter: compare('type', 'eq', 'work') })));
    expect(refusal(`(${mixed})`)).toMatch(/nests deeper than 5 levels/);
    expect(refusal('not (not (not (not (not (not (title pr))))))')).toMatch(/nests deeper than 5 levels/);
  });

  it('refuses hostile nesting cleanly, never overflowing the stack', () => {
    expect(refusal('('.repeat(1000))).toBe('the filter nests deeper than 5 levels of (), not () and [] (at character 6)');
    expect(refusal(`${'('.repeat(495)}title pr${')'.repeat(495)}`)).toMatch(/nests deeper than 5 levels/);
    expect(refusal('not ('.repeat(200))).toMatch(/nests deeper than 5 levels/);
    expect(refusal('emails['.repeat(142))).toMatch(/^unknown sub-attribute "emails" of "emails"/);
  });
});

/** Prints a filter with the fewest parentheses its shape needs (and/or group from the left). */
function print(filter: ScimFilter, context = 0): string {
  const wrap = (text: string, precedence: number) => (context > precedence ? `(${text})` : text);
  switch (filter.kind) {
    case 'or':
      return wrap(`${print(filter.left, 1)} or ${print(filter.right, 2)}`, 1);
    case 'and':
      return wrap(`${print(filter.left, 2)} and ${print(filter.right, 3)}`, 2);
    case 'not':
      return `not (${print(filter.filter)})`;
    case 'present':
      return `${filter.attribute} pr`;
    case 'compare':
      return `${filter.attribute} ${filter.op} ${JSON.stringify(filter.value)}`;
    case 'valuePath':
      return `${filter.attribute}[${print(filter.filter)}]`;
  }
}

function comparisons(filter: ScimFilter): number {
  if (filter.kind === 'and' || filter.kind === 'or') return comparisons(filter.left) + comparisons(filter.right);
  if (filter.kind === 'not' || filter.kind === 'valuePath') return comparisons(filter.filter);
  return 1;
}

/** The deepest nesting of () and [] in `text`, strings skipped. */
function nesting(text: string): number {
  let [depth, deepest, inString] = [0, 0, false];
  for (let at = 0; at < text.length; at += 1) {
    const char = text[at];
    if (inString && char === '\\') at += 1;
    else if (char === '"') inString = !inString;
    else if (!inString && (char === '(' || char === '[')) deepest = Math.max(deepest, ++depth);
    else if (!inString && (char === ')' || char === ']')) depth -= 1;
  }
  return deepest;
}

const value = fc.oneof(fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }).map((number) => (Object.is(number, -0) ? 0 : number)), fc.boolean(), fc.constant(null));
const op = fc.constantFrom('eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le');
const comparison = (attributes: readonly string[]): fc.Arbitrary<ScimFilter> =>
  fc.oneof(
    fc.constantFrom(...attributes).map(present),
    fc.tuple(fc.constantFrom(...attributes), op, value).map(([attribute, operator, compared]) => compare(attribute, operator, compared)),
  );
const logic = (leaf: fc.Arbitrary<ScimFilter>) =>
  fc.letrec<{ node: ScimFilter }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.tuple(tie('node'), tie('node'), fc.constantFrom('and', 'or')).map(([left, right, kind]) => (kind === 'and' ? and(left, right) : or(left, right))),
      tie('node').map(not),
    ),
  })).node;
const relative = logic(comparison(['type', 'value', 'primary']));
const filters = logic(
  fc.oneof(
    comparison(['userName', 'title', 'active', 'name.givenName', 'emails.value', 'meta.lastModified', `${ENTERPRISE_SCHEMA}:department`, `${ENTERPRISE_SCHEMA}:manager.value`]),
    relative.map((inner): ScimFilter => ({ kind: 'valuePath', attribute: 'emails', filter: inner })),
  ),
).filter((filter) => comparisons(filter) <= FILTER_LIMITS.comparisons && nesting(print(filter)) <= FILTER_LIMITS.depth);

describe('parseFilter: properties', () => {
  it('reads back any filter within the bounds as printed', () => {
    fc.assert(
      fc.property(filters, (filter) => {
        expect(parseFilter(print(filter))).toEqual(filter);
      }),
      { numRuns: 500 },
    );
  });

  it('answers any text with a filter or an invalidFilter, never another error', () => {
    const pieces = fc.constantFrom('(', ')', '[', ']', ' ', '"', '\\', '.', ':', 'not', 'and', 'or', 'eq', 'pr', 'userName', 'emails', 'type', '"x"', '1', 'true', 'urn:ietf:params:scim:schemas:core:2.0:User:');
    const texts = fc.oneof(fc.string({ maxLength: 1200 }), fc.array(pieces, { maxLength: 400 }).map((parts) => parts.join('')));
    fc.assert(
      fc.property(texts, (text) => {
        try {
          parseFilter(text);
        } catch (error) {
          expect(error).toMatchObject({ name: 'ScimError', status: 400, scimType: 'invalidFilter' });
        }
      }),
      { numRuns: 2000 },
    );
  });
});
