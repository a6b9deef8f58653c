// Where a PATCH path points in a User document: the attribute's definition, and the object holding it.
import { isJsonObject } from './filter-match.js';
import { isEmpty } from './patch-elements.js';
import { parsePath, type PatchPath } from './patch-path.js';
import { ScimError, badRequest } from './scim-error.js';
import { COMMON_ATTRIBUTES, ENTERPRISE_ATTRIBUTES, ENTERPRISE_SCHEMA, USER_ATTRIBUTES, USER_SCHEMA, findAttribute, type ScimAttribute } from './user-schema.js';

/** A User as JSON with canonical names; enterprise attributes nested under ENTERPRISE_SCHEMA. */
export type ScimDocument = Record<string, unknown>;

/** A resolved path and where its attribute lives: the document, or its enterprise extension. */
export interface Target {
  readonly path: PatchPath;
  readonly definition: ScimAttribute;
  readonly key: string;
  readonly extension: boolean;
}

const SERVICE_OWNED = new Set(['id', 'meta', 'groups', 'schemas']);
const CORE_PREFIX = `${USER_SCHEMA}:`.toLowerCase();

/** Resolves a PATCH path; what the service owns, and `password`, are refused as `mutability` before the path is read. */
export function resolveTarget(text: string): Target {
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

export function containerOf(document: ScimDocument, target: Target, create: true): Record<string, unknown>;
export function containerOf(document: ScimDocument, target: Target, create: false): Record<string, unknown> | undefined;
export function containerOf(document: ScimDocument, target: Target, create: boolean): Record<string, unknown> | undefined {
  if (!target.extension) return document;
  const existing = document[ENTERPRISE_SCHEMA];
  if (isJsonObject(existing)) return existing;
  if (!create) return undefined;
  const created: Record<string, unknown> = {};
  document[ENTERPRISE_SCHEMA] = created;
  return created;
}

/** Empty arrays and objects are unassigned (RFC 7643 §2.5): the attribute, or the extension, goes. */
export function settle(document: ScimDocument, target: Target): void {
  const container = containerOf(document, target, false);
  if (container !== undefined && isEmpty(container[target.key])) delete container[target.key];
  if (target.extension && isEmpty(document[ENTERPRISE_SCHEMA])) delete document[ENTERPRISE_SCHEMA];
}
