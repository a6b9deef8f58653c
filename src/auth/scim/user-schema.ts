/**
 * The attributes of a SCIM User as this service keeps them (RFC 7643 §4.1 and the enterprise
 * extension, §4.3). One definition serves `/Schemas`, the validation of what a client sends, the
 * case-insensitive resolution of attribute names and the PATCH engine. An attribute not listed
 * here is refused, never silently dropped.
 */
export type AttributeType = 'string' | 'boolean' | 'complex' | 'reference' | 'dateTime' | 'integer';
export type Mutability = 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';

export interface ScimAttribute {
  readonly name: string;
  readonly type: AttributeType;
  readonly multiValued: boolean;
  readonly description: string;
  readonly required: boolean;
  readonly caseExact: boolean;
  readonly mutability: Mutability;
  readonly returned: 'always' | 'never' | 'default' | 'request';
  readonly uniqueness: 'none' | 'server' | 'global';
  readonly subAttributes?: readonly ScimAttribute[];
  readonly canonicalValues?: readonly string[];
  readonly referenceTypes?: readonly string[];
}

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const ENTERPRISE_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

type Options = Partial<Omit<ScimAttribute, 'name' | 'type' | 'description'>>;

function attribute(name: string, type: AttributeType, description: string, options: Options = {}): ScimAttribute {
  return { name, type, description, multiValued: false, required: false, caseExact: false, mutability: 'readWrite', returned: 'default', uniqueness: 'none', ...options };
}

const text = (name: string, description: string, options: Options = {}) => attribute(name, 'string', description, options);

/** `value`, `display`, `type`, `primary`: the sub-attributes of emails, phone numbers and the like. */
function multiValued(name: string, description: string, types: readonly string[]): ScimAttribute {
  return attribute(name, 'complex', description, {
    multiValued: true,
    subAttributes: [
      text('value', `The ${name} value.`),
      text('display', 'A human-readable name, for display only.'),
      text('type', 'A label for the function of the value.', { canonicalValues: types }),
      attribute('primary', 'boolean', 'The primary value; at most one is primary.'),
    ],
  });
}

export const USER_ATTRIBUTES: readonly ScimAttribute[] = [
  text('userName', "The admin's username within the school; unique in the school, compared without case.", { required: true, uniqueness: 'server' }),
  attribute('name', 'complex', "The admin's name, kept as given.", {
    subAttributes: ['formatted', 'familyName', 'givenName', 'middleName', 'honorificPrefix', 'honorificSuffix'].map((sub) => text(sub, `The ${sub} part of the name.`)),
  }),
  text('displayName', 'The name shown for the admin.'),
  text('nickName', 'A casual name.'),
  attribute('profileUrl', 'reference', 'A profile page.', { referenceTypes: ['external'] }),
  text('title', 'The job title.'),
  text('userType', 'The relation to the organization.'),
  text('preferredLanguage', 'The preferred language (RFC 7231 Accept-Language).'),
  text('locale', 'The locale, as language-region.'),
  text('timezone', 'The time zone, as an IANA name.'),
  attribute('active', 'boolean', 'Enabled; false disables the admin and ends every session at once.'),
  text('password', 'Never accepted: a SCIM client neither sets nor reads a password.', { mutability: 'writeOnly', returned: 'never' }),
  multiValued('emails', 'Addresses the admin is told at; a work or primary address links single sign-on.', ['work', 'home', 'other']),
  multiValued('phoneNumbers', 'Phone numbers, kept as given.', ['work', 'home', 'mobile', 'fax', 'pager', 'other']),
  attribute('addresses', 'complex', 'Postal addresses, kept as given.', {
    multiValued: true,
    subAttributes: [
      ...['formatted', 'streetAddress', 'locality', 'region', 'postalCode', 'country'].map((sub) => text(sub, `The ${sub} part of the address.`)),
      text('type', 'A label for the address.', { canonicalValues: ['work', 'home', 'other'] }),
      attribute('primary', 'boolean', 'The primary address.'),
    ],
  }),
  attribute('groups', 'complex', 'Not kept: groups are not offered (ServiceProviderConfig).', { multiValued: true, mutability: 'readOnly' }),
];

export const ENTERPRISE_ATTRIBUTES: readonly ScimAttribute[] = [
  ...['employeeNumber', 'costCenter', 'organization', 'division', 'department'].map((name) => text(name, `The ${name}, kept as given.`)),
  attribute('manager', 'complex', "The admin's manager, kept as given.", {
    subAttributes: [text('value', "The manager's id."), attribute('$ref', 'reference', "The manager's URI.", { referenceTypes: ['User'] }), text('displayName', "The manager's name.", { mutability: 'readOnly' })],
  }),
];

/** Attributes every resource has (RFC 7643 §3.1), set by the service. */
export const COMMON_ATTRIBUTES: readonly ScimAttribute[] = [
  text('id', 'The admin id: the access tokens\' subject.', { caseExact: true, mutability: 'readOnly', returned: 'always', uniqueness: 'server' }),
  text('externalId', "The directory's id for the admin; unique in the school.", { caseExact: true }),
];

/** The definition named `name` among `attributes`, compared without case as SCIM asks. */
export function findAttribute(attributes: readonly ScimAttribute[], name: string): ScimAttribute | undefined {
  const lower = name.toLowerCase();
  return attributes.find((candidate) => candidate.name.toLowerCase() === lower);
}
