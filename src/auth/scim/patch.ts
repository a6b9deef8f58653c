import type { FilterValue, ScimFilter } from './scim-filter.js';
import { isJsonObject, matchesFilter, memberOf } from './filter-match.js';
import { parsePath, type PatchPath } from './patch-path.js';
import { ScimError, badRequest } from './scim-error.js';
import { COMMON_ATTRIBUTES, ENTERPRISE_ATTRIBUTES, ENTERPRISE_SCHEMA, USER_ATTRIBUTES, USER_SCHEMA, findAttribute, type ScimAttribute } from './user-schema.js';

/** A User as JSON with canonical names; enterprise attributes nested under ENTERPRISE_SCHEMA. */
export type ScimDocument = Record<string, unknown>;

export const PATCH_OP_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const MAX_PATCH_OPERATIONS = 100;

type Op = 'add' | 'replace' | 'remove';

interface Operation {
  readonly op: Op;
  readonly path?: string;
  readonly value?: unknown;
}

/** A resolved path and where its attribute lives: the document, or its enterprise extension. */
interface Target {
  readonly path: PatchPath;
  readonly definition: ScimAttribute;
  readonly key: string;
  readonly extension: boolean;
}

/**
 * Applies a PatchOp message (RFC 7644 §3.5.2) to a User and returns the new document; the input is
 * never changed. Operations apply in order, all or nothing. Values are kept as sent ("False" stays
 * a string): coercion and validation of the result are the caller's, after the patch.
 */
export function applyPatch(resource: ScimDocument, body: unknown): ScimDocument {
  const operations = readOperations(body);
  const document = structuredClone(resource);
  operations.forEach((operation, index) => {
    try {
      applyOperation(document, operation);
    } catch (error) {
      if (!(error instanceof ScimError)) throw error;
      throw new ScimError(error.status, error.scimType, `operation ${index + 1} (${operation.op}${operation.path === undefined ? '' : ` ${operation.path}`}): ${error.message}`);
    }
  });
  return document;
}

function readOperations(body: unknown): Operation[] {
  if (!isJsonObject(body)) throw badRequest('invalidSyntax', 'a PATCH body is a JSON object with "schemas" and "Operations"');
  const schemas = memberOf(body, 'schemas');
  const patchOp = PATCH_OP_SCHEMA.toLowerCase();
  if (!Array.isArray(schemas) || !schemas.some((schema) => typeof schema === 'string' && schema.toLowerCase() === patchOp)) {
    throw badRequest('invalidSyntax', `"schemas" must list "${PATCH_OP_SCHEMA}"`);
  }
  const operations = memberOf(body, 'Operations');
  if (!Array.isArray(operations) || operations.length === 0) throw badRequest('invalidSyntax', '"Operations" must be a non-empty array');
  if (operations.length > MAX_PATCH_OPERATIONS) throw badRequest('invalidSyntax', `at most ${MAX_PATCH_OPERATIONS} operations in one PATCH, not ${operations.length}`);
  return operations.map(readOperation);
}

function readOperation(raw: unknown, index: number): Operation {
  const where = `operation ${index + 1}`;
  if (!isJsonObject(raw)) throw badRequest('invalidSyntax', `${where} is not an object`);
  const op = memberOf(raw, 'op');
  const lower = typeof op === 'string' ? op.toLowerCase() : '';
  if (lower !== 'add' && lower !== 'replace' && lower !== 'remove') throw badRequest('invalidSyntax', `${where}: "op" must be add, replace or remove, not ${op === undefined ? 'missing' : JSON.stringify(op)}`);
  const path = memberOf(raw, 'path') ?? undefined;
  if (path !== undefined && typeof path !== 'string') throw badRequest('invalidPath', `${where}: "path" must be a string`);
  const value = memberOf(raw, 'value');
  if (lower !== 'remove' && value === undefined) throw badRequest('invalidValue', `${where}: ${lower} needs a "value"`);
  return { op: lower, path, value };
}

function applyOperation(document: ScimDocument, { op, path, value }: Operation): void {
  if (path === undefined && op === 'remove') throw new ScimError(400, 'noTarget', 'remove needs a "path"');
  if (path === undefined) return applyValueObject(document, op, value);
  applyAt(document, op, resolveTarget(path), value);
}

function applyAt(document: ScimDocument, op: Op, target: Target, value: unknown): void {
  if (op === 'remove' || value === null) return removeTarget(document, target, value);
  writeTarget(document, op, target, value);
}

/** Without a path, `value` holds attributes by name, each applied as if it were the path. */
function applyValueObject(document: ScimDocument, op: Op, value: unknown): void {
  if (!isJsonObject(value)) throw badRequest('invalidValue', 'without a "path", "value" must be an object of attributes');
  for (const [key, item] of Object.entries(value)) {
    if (key.toLowerCase() !== ENTERPRISE_SCHEMA.toLowerCase()) {
      applyAt(document, op, keyTarget(key, key), item);
      continue;
    }
    if (!isJsonObject(item)) throw badRequest('invalidValue', `"${key}" must be an object of enterprise attributes`);
    for (const [inner, innerItem] of Object.entries(item)) applyAt(document, op, keyTarget(`${ENTERPRISE_SCHEMA}:${inner}`, inner), innerItem);
  }
}

/** A key of a value object names an attribute as a path does; an unknown one is a bad value, not a bad path. */
function keyTarget(path: string, key: string): Target {
  try {
    return resolveTarget(path);
  } catch (error) {
    if (error instanceof ScimError && error.scimType === 'invalidPath') throw badRequest('invalidValue', `unknown attribute "${key}" in "value"`);
    throw error;
  }
}

const SERVICE_OWNED = new Set(['id', 'meta', 'groups', 'schemas']);
const CORE_PREFIX = `${USER_SCHEMA}:`.toLowerCase();

function resolveTarget(text: string): Target {
  const lower = text.trim().toLowerCase();
  const [leading = ''] = (lower.startsWith(CORE_PREFIX) ? lower.slice(CORE_PREFIX.length) : lower).split(/[.[\s]/);
  if (SERVICE_OWNED.has(leading)) throw new ScimError(400, 'mutability', `"${leading}" is set by the service and cannot be changed`);
  if (leading === 'password') throw new ScimError(400, 'mutability', '"password" cannot be set: a SCIM client never sets a password, each admin chooses their own');
  const path = parsePath(text);
  const extension = path.attribute.startsWith(`${ENTERPRISE_SCHEMA}:`);
  const key = extension ? path.attribute.slice(ENTERPRISE_SCHEMA.length + 1) : path.attribute;
  const definition = findAttribute(extension ? ENTERPRISE_ATTRIBUTES : [...COMMON_ATTRIBUTES, ...USER_ATTRIBUTES], key);
  if (definition === undefined) throw badRequest('invalidPath', `unknown attribute "${text}"`);
  return { path, definition, key, extension };
}

/** add and replace: alike but for a multi-valued attribute (append or replace all) and a filter without sub-attribute (merge or replace). */
function writeTarget(document: ScimDocument, op: Op, target: Target, value: unknown): void {
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
function removeTarget(document: ScimDocument, target: Target, value: unknown): void {
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

const hasValueSubAttribute = (definition: ScimAttribute): boolean => findAttribute(definition.subAttributes ?? [], 'value') !== undefined;

/** Appends what is not already there; an added primary element takes primary from the others. */
function appendElements(current: unknown, definition: ScimAttribute, value: unknown): unknown[] {
  const added = elementsOf(definition, value);
  const result = [...arrayOf(current)];
  for (const element of added) if (!result.some((existing) => sameJson(existing, element))) result.push(element);
  return keepOnePrimary(result, added);
}

function keepOnePrimary(elements: unknown[], chosen: readonly unknown[]): unknown[] {
  const winner = chosen.findLast(isPrimary);
  if (winner === undefined) return elements;
  return elements.map((element) => (isPrimary(element) && !sameJson(element, winner) ? { ...(element as object), primary: false } : element));
}

function isPrimary(element: unknown): boolean {
  const primary = isJsonObject(element) ? element.primary : undefined;
  return primary === true || (typeof primary === 'string' && primary.toLowerCase() === 'true');
}

/** A single element stands for a list of one. */
function elementsOf(definition: ScimAttribute, value: unknown): unknown[] {
  return (Array.isArray(value) ? value : [value]).map((element) => canonicalElement(definition, element));
}

/** Some clients wrap a singular complex value in a list of one; Entra sends a manager as its bare id. */
function singularComplex(definition: ScimAttribute, value: unknown): Record<string, unknown> {
  const single = onlyElement(value);
  if (hasValueSubAttribute(definition) && (typeof single === 'string' || typeof single === 'number')) return { value: single };
  return elementObject(definition, single);
}

/** One element of a complex attribute: an object of its sub-attributes, a list of one unwrapped. */
function elementObject(definition: ScimAttribute, value: unknown): Record<string, unknown> {
  const element = canonicalElement(definition, onlyElement(value));
  if (!isJsonObject(element)) throw badRequest('invalidValue', `"${definition.name}" is complex: give an object of its sub-attributes`);
  return element;
}

const onlyElement = (value: unknown): unknown => (Array.isArray(value) && value.length === 1 ? (value[0] as unknown) : value);

/** Sub-attributes given replace or add; the others stay (RFC 7644 §3.5.2.3). A null one is removed. */
function mergeInto(current: unknown, given: Record<string, unknown>): Record<string, unknown> {
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

function containerOf(document: ScimDocument, target: Target, create: true): Record<string, unknown>;
function containerOf(document: ScimDocument, target: Target, create: false): Record<string, unknown> | undefined;
function containerOf(document: ScimDocument, target: Target, create: boolean): Record<string, unknown> | undefined {
  if (!target.extension) return document;
  const existing = document[ENTERPRISE_SCHEMA];
  if (isJsonObject(existing)) return existing;
  if (!create) return undefined;
  const created: Record<string, unknown> = {};
  document[ENTERPRISE_SCHEMA] = created;
  return created;
}

/** Empty arrays and objects are unassigned (RFC 7643 §2.5): the attribute, or the extension, goes. */
function settle(document: ScimDocument, target: Target): void {
  const container = containerOf(document, target, false);
  if (container !== undefined && isEmpty(container[target.key])) delete container[target.key];
  if (target.extension && isEmpty(document[ENTERPRISE_SCHEMA])) delete document[ENTERPRISE_SCHEMA];
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isJsonObject(value) && Object.keys(value).length === 0;
}

function without(element: unknown, key: string): unknown {
  if (!isJsonObject(element)) return element;
  const { [key]: _removed, ...rest } = element;
  return rest;
}

const arrayOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, index) => sameJson(item, b[index]));
  if (!isJsonObject(a) || !isJsonObject(b)) return a === b;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && sameJson(a[key], b[key]));
}
