// Values of complex and multi-valued attributes: canonical keys, appending, one primary, equality, emptiness.
import { isJsonObject } from './filter-match.js';
import { badRequest } from './scim-error.js';
import { findAttribute, type ScimAttribute } from './user-schema.js';

export const hasValueSubAttribute = (definition: ScimAttribute): boolean => findAttribute(definition.subAttributes ?? [], 'value') !== undefined;

/** Appends what is not already there; an added primary element takes primary from the others. */
export function appendElements(current: unknown, definition: ScimAttribute, value: unknown): unknown[] {
  const added = elementsOf(definition, value);
  const result = [...arrayOf(current)];
  for (const element of added) if (!result.some((existing) => sameJson(existing, element))) result.push(element);
  return keepOnePrimary(result, added);
}

export function keepOnePrimary(elements: unknown[], chosen: readonly unknown[]): unknown[] {
  const winner = chosen.findLast(isPrimary);
  if (winner === undefined) return elements;
  return elements.map((element) => (isPrimary(element) && !sameJson(element, winner) ? { ...(element as object), primary: false } : element));
}

function isPrimary(element: unknown): boolean {
  const primary = isJsonObject(element) ? element.primary : undefined;
  return primary === true || (typeof primary === 'string' && primary.toLowerCase() === 'true');
}

/** A single element stands for a list of one. */
export function elementsOf(definition: ScimAttribute, value: unknown): unknown[] {
  return (Array.isArray(value) ? value : [value]).map((element) => canonicalElement(definition, element));
}

/** Some clients wrap a singular complex value in a list of one; Entra sends a manager as its bare id. */
export function singularComplex(definition: ScimAttribute, value: unknown): Record<string, unknown> {
  const single = onlyElement(value);
  if (hasValueSubAttribute(definition) && (typeof single === 'string' || typeof single === 'number')) return { value: single };
  return elementObject(definition, single);
}

/** One element of a complex attribute: an object of its sub-attributes, a list of one unwrapped. */
export function elementObject(definition: ScimAttribute, value: unknown): Record<string, unknown> {
  const element = canonicalElement(definition, onlyElement(value));
  if (!isJsonObject(element)) throw badRequest('invalidValue', `"${definition.name}" is complex: give an object of its sub-attributes`);
  return element;
}

const onlyElement = (value: unknown): unknown => (Array.isArray(value) && value.length === 1 ? (value[0] as unknown) : value);

/** Sub-attributes given replace or add; the others stay (RFC 7644 §3.5.2.3). A null one is removed. */
export function mergeInto(current: unknown, given: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...(isJsonObject(current) ? current : {}), ...given };
  for (const [key, item] of Object.entries(merged)) if (item === null) delete merged[key];
  return merged;
}

/** An object's keys in their canonical spelling; an unknown key is refused, never dropped. */
function canonicalElement(definition: ScimAttribute, element: unknown): unknown {
  if (!isJsonObject(element)) return element;
  const entries = Object.entries(element).map(([key, item]) => {
    const sub = findAttribute(definition.subAttributes ?? [], key);
    if (sub === undefined) throw badRequest('invalidValue', `unknown sub-attribute "${key}" of "${definition.name}"`);
    return [sub.name, item] as const;
  });
  return Object.fromEntries(entries);
}

/** Unassigned as RFC 7643 §2.5 has it: null, an empty array or an empty object. */
export function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isJsonObject(value) && Object.keys(value).length === 0;
}

export function without(element: unknown, key: string): unknown {
  if (!isJsonObject(element)) return element;
  const { [key]: _removed, ...rest } = element;
  return rest;
}

export const arrayOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, index) => sameJson(item, b[index]));
  if (!isJsonObject(a) || !isJsonObject(b)) return a === b;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && sameJson(a[key], b[key]));
}
