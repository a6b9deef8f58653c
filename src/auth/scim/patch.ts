// Reads a SCIM PatchOp message and applies its operations, in order and all or nothing, to a User.
import { isJsonObject, memberOf } from './filter-match.js';
import { removeTarget, writeTarget, type Op } from './patch-operations.js';
import { resolveTarget, type ScimDocument, type Target } from './patch-target.js';
import { ScimError, badRequest } from './scim-error.js';
import { ENTERPRISE_SCHEMA } from './user-schema.js';

export type { ScimDocument } from './patch-target.js';

export const PATCH_OP_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const MAX_PATCH_OPERATIONS = 100;

interface Operation {
  readonly op: Op;
  readonly path?: string;
  readonly value?: unknown;
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
