import { badRequest, ScimError } from './scim-error.js';
import { ENTERPRISE_ATTRIBUTES, ENTERPRISE_SCHEMA, USER_ATTRIBUTES, USER_SCHEMA, findAttribute, type ScimAttribute } from './user-schema.js';

/** A User as the service stores it, read from what a client sent (POST, PUT, or a patched resource). */
export interface UserInput {
  readonly userName: string;
  /** Absent when the client did not say: true for a new admin, unchanged by a replace. */
  readonly active: boolean | undefined;
  /** Absent (undefined) when the client did not send it; null when it sent null. */
  readonly externalId: string | null | undefined;
  /** Every other attribute, canonically named and typed; enterprise ones under ENTERPRISE_SCHEMA. */
  readonly profile: Record<string, unknown>;
}

const MAX_TEXT = 1024;
const MAX_VALUES = 20;
/** Set by the service, or not offered: ignored when a client sends them back (RFC 7643 §2.2). */
const IGNORED = new Set(['schemas', 'id', 'meta', 'groups']);
const CORE_PREFIX = `${USER_SCHEMA}:`.toLowerCase();
const ENTERPRISE_PREFIX = `${ENTERPRISE_SCHEMA}:`.toLowerCase();

function readBoolean(value: unknown, path: string): boolean {
  if (typeof value === 'boolean') return value;
  // Microsoft Entra sends booleans as strings ("False").
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw badRequest('invalidValue', `${path} must be true or false`);
}

function readValue(definition: ScimAttribute, value: unknown, path: string): unknown {
  if (definition.mutability === 'writeOnly') throw new ScimError(400, 'mutability', `${path} cannot be set: a SCIM client never sets or reads a password`);
  if (definition.type === 'boolean') return readBoolean(value, path);
  if (definition.type !== 'complex') {
    if (typeof value !== 'string') throw badRequest('invalidValue', `${path} must be a string`);
    if (value.length > MAX_TEXT) throw badRequest('invalidValue', `${path} is longer than ${MAX_TEXT} characters`);
    return value;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('invalidValue', `${path} must be an object`);
  return readAttributes(definition.subAttributes ?? [], value as Record<string, unknown>, path);
}

function readAttribute(definition: ScimAttribute, value: unknown, path: string): unknown {
  if (!definition.multiValued) return readValue(definition, value, path);
  const values = Array.isArray(value) ? value : [value];
  if (values.length > MAX_VALUES) throw badRequest('invalidValue', `${path} has more than ${MAX_VALUES} values`);
  const read = values.map((item, index) => readValue(definition, item, `${path}[${index}]`));
  if (read.filter((item) => (item as { primary?: unknown }).primary === true).length > 1) throw badRequest('invalidValue', `${path}: at most one value is primary`);
  return read;
}

/** Known attributes of `source`, by canonical name; null and empty values are left out (unassigned). */
function readAttributes(definitions: readonly ScimAttribute[], source: Record<string, unknown>, path: string): Record<string, unknown> {
  const read: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    // Unassigned (RFC 7643 §2.5) carries nothing to keep, whatever the name: Entra's create sends `"roles": []`.
    if (value === null || (Array.isArray(value) && value.length === 0)) continue;
    const definition = findAttribute(definitions, key);
    if (definition === undefined) throw badRequest('invalidValue', `${path === '' ? '' : `${path}.`}${key} is not an attribute this service keeps`);
    // A read-only value sent back (a manager's displayName) is ignored, as RFC 7643 §2.2 asks.
    if (definition.mutability === 'readOnly') continue;
    read[definition.name] = readAttribute(definition, value, path === '' ? definition.name : `${path}.${definition.name}`);
  }
  return read;
}

/** The body split into core and enterprise attributes, keys with a schema URN prefix resolved. */
function splitBySchema(body: Record<string, unknown>): { core: Record<string, unknown>; enterprise: Record<string, unknown> } {
  const core: Record<string, unknown> = {};
  const enterprise: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const lower = key.toLowerCase();
    if (lower === ENTERPRISE_SCHEMA.toLowerCase()) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('invalidValue', `${ENTERPRISE_SCHEMA} must be an object`);
      Object.assign(enterprise, value);
    } else if (lower.startsWith(ENTERPRISE_PREFIX)) enterprise[key.slice(ENTERPRISE_PREFIX.length)] = value;
    else if (lower.startsWith(CORE_PREFIX)) core[key.slice(CORE_PREFIX.length)] = value;
    else if (!IGNORED.has(lower) && lower !== 'externalid') core[key] = value;
  }
  return { core, enterprise };
}

/** Reads a User resource; every problem is a 400 in SCIM's terms, nothing unknown is dropped. */
export function readUser(body: unknown): UserInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('invalidSyntax', 'the body must be a JSON object');
  const source = body as Record<string, unknown>;
  const schemasKey = Object.keys(source).find((key) => key.toLowerCase() === 'schemas');
  const schemas = schemasKey === undefined ? undefined : source[schemasKey];
  if (!Array.isArray(schemas) || !schemas.includes(USER_SCHEMA)) throw badRequest('invalidSyntax', `schemas must include ${USER_SCHEMA}`);
  const externalKey = Object.keys(source).find((key) => key.toLowerCase() === 'externalid');
  const externalId = externalKey === undefined ? undefined : source[externalKey];
  if (externalId !== undefined && externalId !== null && (typeof externalId !== 'string' || externalId.length === 0 || externalId.length > 255)) throw badRequest('invalidValue', 'externalId must be a string of 1 to 255 characters');
  const { core, enterprise } = splitBySchema(source);
  const profile = readAttributes(USER_ATTRIBUTES, core, '');
  const extension = readAttributes(ENTERPRISE_ATTRIBUTES, enterprise, '');
  const { userName, active, ...rest } = profile;
  if (typeof userName !== 'string') throw badRequest('invalidValue', 'userName is required');
  if (Object.keys(extension).length > 0) rest[ENTERPRISE_SCHEMA] = extension;
  return { userName, active: active as boolean | undefined, externalId, profile: rest };
}
