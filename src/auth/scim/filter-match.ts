import type { Comparison, FilterValue, ScimFilter } from './scim-filter.js';
import { ENTERPRISE_SCHEMA } from './user-schema.js';

/**
 * Evaluates a parsed filter in memory against JSON: an element of a multi-valued attribute for a
 * PATCH value path (`{type: 'work', value: 'a@b'}` against `type eq "work"`), or a whole User.
 *
 * Strings compare without case, as the sub-attributes PATCH selects on are all caseExact false.
 * Booleans compare exactly, but an element's "True"/"False" counts as the boolean: Entra sends
 * booleans as strings. A missing or null attribute satisfies only `ne` (and `eq null`); a
 * multi-valued one satisfies a comparison when one of its values does (`ne`: when none is equal).
 */
export function matchesFilter(element: unknown, filter: ScimFilter): boolean {
  switch (filter.kind) {
    case 'and':
      return matchesFilter(element, filter.left) && matchesFilter(element, filter.right);
    case 'or':
      return matchesFilter(element, filter.left) || matchesFilter(element, filter.right);
    case 'not':
      return !matchesFilter(element, filter.filter);
    case 'present':
      return valuesAt(element, filter.attribute).some(isPresent);
    case 'valuePath':
      return valuesAt(element, filter.attribute).some((item) => matchesFilter(item, filter.filter));
    case 'compare':
      return compareAll(valuesAt(element, filter.attribute), filter.op, filter.value);
  }
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The member named `key` compared without case, as SCIM compares attribute names. */
export function memberOf(object: Record<string, unknown>, key: string): unknown {
  if (Object.hasOwn(object, key)) return object[key];
  const lower = key.toLowerCase();
  const found = Object.keys(object).find((candidate) => candidate.toLowerCase() === lower);
  return found === undefined ? undefined : object[found];
}

/** Every value at a dotted path, arrays flattened; an extension's attributes sit under its URN. */
function valuesAt(root: unknown, attribute: string): unknown[] {
  const extension = attribute.startsWith(`${ENTERPRISE_SCHEMA}:`);
  let values: unknown[] = [extension && isJsonObject(root) ? memberOf(root, ENTERPRISE_SCHEMA) : root];
  const path = extension ? attribute.slice(ENTERPRISE_SCHEMA.length + 1) : attribute;
  for (const part of path.split('.')) {
    values = values.flatMap((value) => (isJsonObject(value) ? [memberOf(value, part)].flat() : []));
  }
  return values.filter((value) => value !== undefined && value !== null);
}

function isPresent(value: unknown): boolean {
  return value !== '' && !(Array.isArray(value) && value.length === 0);
}

function compareAll(values: readonly unknown[], op: Comparison, expected: FilterValue): boolean {
  if (expected === null) return op === 'eq' ? values.length === 0 : op === 'ne' && values.length > 0;
  if (op === 'ne') return !values.some((value) => compareOne(value, 'eq', expected));
  return values.some((value) => compareOne(value, op, expected));
}

function compareOne(actual: unknown, op: Comparison, expected: string | number | boolean): boolean {
  if (typeof expected === 'boolean') return op === 'eq' && asBoolean(actual) === expected;
  if (typeof expected === 'number') return typeof actual === 'number' && ordered(op, actual, expected);
  if (typeof actual !== 'string') return false;
  const [text, wanted] = [actual.toLowerCase(), expected.toLowerCase()];
  if (op === 'co') return text.includes(wanted);
  if (op === 'sw') return text.startsWith(wanted);
  if (op === 'ew') return text.endsWith(wanted);
  return ordered(op, text, wanted);
}

/** eq and the orderings; co, sw and ew mean nothing for numbers. */
function ordered<T extends string | number>(op: Comparison, actual: T, expected: T): boolean {
  switch (op) {
    case 'eq':
      return actual === expected;
    case 'gt':
      return actual > expected;
    case 'ge':
      return actual >= expected;
    case 'lt':
      return actual < expected;
    case 'le':
      return actual <= expected;
    default:
      return false;
  }
}

function asBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  const lower = value.toLowerCase();
  return lower === 'true' ? true : lower === 'false' ? false : undefined;
}
