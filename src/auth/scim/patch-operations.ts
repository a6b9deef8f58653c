// What add, replace and remove do to the attribute, sub-attribute or selected elements a path targets.
import type { FilterValue, ScimFilter } from './scim-filter.js';
import { isJsonObject, matchesFilter, memberOf } from './filter-match.js';
import { appendElements, arrayOf, elementObject, elementsOf, hasValueSubAttribute, isEmpty, keepOnePrimary, mergeInto, singularComplex, without } from './patch-elements.js';
import { containerOf, settle, type ScimDocument, type Target } from './patch-target.js';
import { ScimError, badRequest } from './scim-error.js';
import type { ScimAttribute } from './user-schema.js';

export type Op = 'add' | 'replace' | 'remove';

/** add and replace: alike but for a multi-valued attribute (append or replace all) and a filter without sub-attribute (merge or replace). */
export function writeTarget(document: ScimDocument, op: Op, target: Target, value: unknown): void {
  const { path, definition, key } = target;
  const container = containerOf(document, target, true);
  if (path.filter !== undefined) writeMatches(container, op, target, path.filter, value);
  else if (path.subAttribute !== undefined) writeSubAttribute(container, target, path.subAttribute, value);
  else if (definition.multiValued) container[key] = op === 'add' ? appendElements(container[key], definition, value) : elementsOf(definition, value);
  else if (definition.type === 'complex') container[key] = mergeInto(container[key], singularComplex(definition, value));
  else container[key] = value;
  settle(document, target);
}

function writeSubAttribute(container: Record<string, unknown>, target: Target, subAttribute: string, value: unknown): void {
  if (target.definition.multiValued) throw badRequest('invalidPath', `"${target.path.attribute}.${subAttribute}" would change every element: select them with a filter, e.g. ${target.path.attribute}[type eq "work"].${subAttribute}`);
  const parent = isJsonObject(container[target.key]) ? container[target.key] : {};
  container[target.key] = { ...(parent as object), [subAttribute]: value };
}

function writeMatches(container: Record<string, unknown>, op: Op, target: Target, filter: ScimFilter, value: unknown): void {
  const sub = target.path.subAttribute;
  const written: unknown[] = [];
  const elements = arrayOf(container[target.key]).map((element) => {
    if (!isJsonObject(element) || !matchesFilter(element, filter)) return element;
    const object = sub === undefined ? elementObject(target.definition, value) : { [sub]: value };
    const rewritten = op === 'replace' && sub === undefined ? object : { ...element, ...object };
    written.push(rewritten);
    return rewritten;
  });
  container[target.key] = written.length === 0 ? [...elements, seededElement(target, filter, value)] : keepOnePrimary(elements, written);
}

/**
 * A filter that selects nothing is an error (noTarget), except the one way Entra adds a typed value:
 * `emails[type eq "work"].value` on a user without a work address appends `{type: "work", value}`.
 */
function seededElement(target: Target, filter: ScimFilter, value: unknown): Record<string, unknown> {
  const sub = target.path.subAttribute;
  if (sub === undefined || filter.kind !== 'compare' || filter.op !== 'eq') throw new ScimError(400, 'noTarget', `no element of "${target.path.attribute}" matches the filter`);
  return { [filter.attribute]: filter.value, [sub]: value };
}

/** remove, and add or replace with null (RFC 7643 §2.5: null is unassigned). Removing nothing is no error. */
export function removeTarget(document: ScimDocument, target: Target, value: unknown): void {
  const container = containerOf(document, target, false);
  if (container === undefined) return;
  container[target.key] = remainder(container[target.key], target, value);
  settle(document, target);
}

/** What is left of the attribute once the target is removed from it. */
function remainder(current: unknown, { path, definition }: Target, value: unknown): unknown {
  const { filter, subAttribute: sub } = path;
  if (definition.multiValued && (filter !== undefined || sub !== undefined)) {
    const selected = (element: unknown) => filter === undefined || (isJsonObject(element) && matchesFilter(element, filter));
    const kept = arrayOf(current).map((element) => (!selected(element) ? element : sub === undefined ? undefined : without(element, sub)));
    return kept.filter((element) => !isEmpty(element));
  }
  if (sub !== undefined) return without(current, sub);
  if (value !== undefined && value !== null && hasValueSubAttribute(definition)) return withoutNamed(current, definition, value);
  return undefined;
}

/** Entra removes members and managers by naming them, `"value": [{"value": "id"}]`: only those go. */
function withoutNamed(current: unknown, definition: ScimAttribute, value: unknown): unknown {
  const names = (Array.isArray(value) ? (value as unknown[]) : [value]).map((item) => (isJsonObject(item) ? memberOf(item, 'value') : item));
  const comparable = names.filter((name): name is FilterValue => name === null || ['string', 'number', 'boolean'].includes(typeof name));
  if (comparable.length < names.length) throw badRequest('invalidValue', 'a remove with a "value" names what goes as [{"value": ...}]');
  const named = (element: unknown) => comparable.some((name) => matchesFilter(element, { kind: 'compare', op: 'eq', attribute: 'value', value: name }));
  if (!definition.multiValued) return named(current) ? undefined : current;
  return arrayOf(current).filter((element) => !named(element));
}
