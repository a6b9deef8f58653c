// Resolves an attribute as named in a filter or PATCH path to its canonical name and definition.
import type { ScimError } from './scim-error.js';
import { COMMON_ATTRIBUTES, ENTERPRISE_ATTRIBUTES, ENTERPRISE_SCHEMA, USER_ATTRIBUTES, USER_SCHEMA, findAttribute, type ScimAttribute } from './user-schema.js';

/** An attribute as named in a filter or path: canonical, an extension's prefixed by its schema URN. */
export interface AttributeName {
  readonly attribute: string;
  readonly definition: ScimAttribute;
  readonly subAttribute?: ScimAttribute;
}

/** Makes the error for a name that does not resolve; the caller's says where the name stood. */
export type NameError = (detail: string) => ScimError;

const metaPart = (name: string, type: ScimAttribute['type']): ScimAttribute => ({
  name, type, description: `meta.${name}, set by the service.`, multiValued: false, required: false, caseExact: false, mutability: 'readOnly', returned: 'default', uniqueness: 'none',
});
/** `meta` (RFC 7643 §3.1) is the service's: a filter may read it, a PATCH never writes it. */
const META: ScimAttribute = { ...metaPart('meta', 'complex'), subAttributes: [metaPart('created', 'dateTime'), metaPart('lastModified', 'dateTime'), metaPart('resourceType', 'string')] };
const CORE: readonly ScimAttribute[] = [...COMMON_ATTRIBUTES, ...USER_ATTRIBUTES, META];

/** attrPath: `[URN:]name[.sub]`, resolved without case against user-schema.ts. */
export function resolveAttributeName(text: string, error: NameError): AttributeName {
  const colon = text.lastIndexOf(':');
  const schema = colon < 0 ? USER_SCHEMA : text.slice(0, colon);
  const [name = '', sub, ...deeper] = text.slice(colon + 1).split('.');
  const extension = sameText(schema, ENTERPRISE_SCHEMA);
  if (!extension && !sameText(schema, USER_SCHEMA)) throw error(`unknown schema "${schema}"`);
  const definition = findAttribute(extension ? ENTERPRISE_ATTRIBUTES : CORE, name);
  if (definition === undefined || deeper.length > 0) throw error(`unknown attribute "${text}"`);
  const parent = { attribute: extension ? `${ENTERPRISE_SCHEMA}:${definition.name}` : definition.name, definition };
  return sub === undefined ? parent : { ...parent, subAttribute: resolveSubAttribute(parent, sub, error) };
}

export function resolveSubAttribute(parent: AttributeName, name: string, error: NameError): ScimAttribute {
  const found = findAttribute(parent.definition.subAttributes ?? [], name);
  if (found === undefined) throw error(`unknown sub-attribute "${name}" of "${parent.attribute}"`);
  return found;
}

/** A complex attribute compares by a sub-attribute; a multi-valued one alone means its `value`. */
export function comparedAttribute(name: AttributeName, error: NameError): string {
  if (name.subAttribute !== undefined) return `${name.attribute}.${name.subAttribute.name}`;
  if (name.definition.type !== 'complex') return name.attribute;
  const value = name.definition.multiValued ? findAttribute(name.definition.subAttributes ?? [], 'value') : undefined;
  if (value === undefined) throw error(`"${name.attribute}" is complex: name one of its sub-attributes`);
  return `${name.attribute}.${value.name}`;
}

const sameText = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();
