import { isSecretName } from './secret-names.js';

/**
 * Request-body validation that reports problems item for item as FastAPI (Pydantic v2) does
 * for a model of required, length-limited string fields, with two deliberate differences:
 * secrets are never echoed (docs/http-edge.md), and lengths are limited (LIMITS in routes/schemas.ts).
 */

/** A body that was not parsed as JSON (non-JSON Content-Type): validated as a string, never echoed. */
export class RawBody {
  constructor(readonly text: string) {}
}

/** One field of a request model, in declaration order: a required string unless told otherwise. */
export interface FieldSpec {
  readonly name: string;
  /** In code points, as Python's `len` counts. */
  readonly maxLength: number;
  /** `object`: a JSON object (Pydantic's `dict`), whose members are checked by the route. */
  readonly kind?: 'string' | 'object';
  /** Pydantic's `X | None = None`: may be absent or null. */
  readonly optional?: boolean;
}

/** One item of a 422 body's `detail`, exactly as FastAPI renders it. */
export interface ValidationItem {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

/** What an error body shows instead of a secret. */
export const REDACTED = '[redacted]';

/**
 * Validates a request body against `fields`.
 *
 * @param body `undefined` for an empty body, a {@link RawBody}, or the value parsed from JSON.
 * @returns every problem, in field order; `[]` when the body is valid.
 */
export function validateBody(body: unknown, fields: readonly FieldSpec[]): ValidationItem[] {
  if (body === undefined || body === null) {
    return [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }];
  }
  if (!isPlainObject(body)) {
    return [
      {
        type: 'model_attributes_type',
        loc: ['body'],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        input: redact(body),
      },
    ];
  }
  // Every `missing` item echoes the whole body: copy it once, and only if needed.
  let echoedBody: unknown;
  const echoBody = (): unknown => (echoedBody ??= redact(body));
  const items: ValidationItem[] = [];
  for (const field of fields) {
    const item = validateField(body, field, echoBody);
    if (item !== undefined) items.push(item);
  }
  return items;
}

/**
 * The item FastAPI answers for a body that is not valid JSON.
 *
 * @param position Python's `JSONDecodeError.pos`, in code points.
 * @param message Python's `JSONDecodeError.msg`, e.g. `Expecting value`.
 */
export function jsonInvalidItem(position: number, message: string): ValidationItem {
  return {
    type: 'json_invalid',
    loc: ['body', position],
    msg: 'JSON decode error',
    input: {},
    ctx: { error: message },
  };
}

/**
 * The 422 body for a body that is not valid JSON: `{"detail": [jsonInvalidItem(...)]}` as
 * JSON.stringify writes it, from a template. It is the cheapest answer anyone can provoke, and
 * JSON.stringify's generic walk of the item is a large part of it; only the message needs escaping.
 */
export function jsonInvalidBody(position: number, message: string): string {
  return `{"detail":[{"type":"json_invalid","loc":["body",${position}],"msg":"JSON decode error","input":{},"ctx":{"error":${JSON.stringify(message)}}}]}`;
}

function validateField(body: object, field: FieldSpec, echoBody: () => unknown): ValidationItem | undefined {
  const { name, maxLength } = field;
  const value = ownValue(body, name);
  if (field.optional === true && (value === undefined || value === null)) return undefined;
  if (!Object.hasOwn(body, name)) {
    return { type: 'missing', loc: ['body', name], msg: 'Field required', input: echoBody() };
  }
  if (field.kind === 'object') {
    if (isPlainObject(value)) return undefined;
    return { type: 'dict_type', loc: ['body', name], msg: 'Input should be a valid dictionary', input: echoField(name, value) };
  }
  if (typeof value !== 'string') {
    return { type: 'string_type', loc: ['body', name], msg: 'Input should be a valid string', input: echoField(name, value) };
  }
  // UTF-16 length bounds the code-point count from above: the exact count is rarely needed.
  if (value.length <= maxLength || codePointLength(value) <= maxLength) return undefined;
  return {
    type: 'string_too_long',
    loc: ['body', name],
    msg: `String should have at most ${maxLength} character${maxLength === 1 ? '' : 's'}`,
    input: echoField(name, value),
    ctx: { max_length: maxLength },
  };
}

function echoField(name: string, value: unknown): unknown {
  return isSecretName(name) ? REDACTED : redact(value);
}

/** Counts like Python's `len`: a surrogate pair is one character, a lone surrogate too. */
function codePointLength(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++, count++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const nextUnit = text.charCodeAt(i + 1);
      if (nextUnit >= 0xdc00 && nextUnit <= 0xdfff) i++;
    }
  }
  return count;
}

/** What JSON.parse produces for an object; anything else is not a dictionary to Pydantic either. */
function isPlainObject(value: unknown): value is object {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Reads an own data property without running getters or looking at the prototype chain. */
function ownValue(target: object, key: string): unknown {
  const descriptor = Object.getOwnPropertyDescriptor(target, key);
  return descriptor?.value;
}

type Container = unknown[] | Record<string, unknown>;

/**
 * A copy of `value` fit to echo: secret members replaced at every depth, raw bodies hidden.
 * Iterative, and memoised on identity, so neither deep nesting nor a cycle can overflow the
 * stack of a request that is only being rejected.
 */
export function redact(value: unknown): unknown {
  const copies = new Map<object, Container>();
  const pending: object[] = [];
  const copyOf = (item: unknown): unknown => {
    if (item instanceof RawBody) return REDACTED;
    if (!Array.isArray(item) && !isPlainObject(item)) return item;
    let copy = copies.get(item);
    if (copy === undefined) {
      copy = Array.isArray(item) ? [] : {};
      copies.set(item, copy);
      pending.push(item);
    }
    return copy;
  };
  const root = copyOf(value);
  for (let source = pending.pop(); source !== undefined; source = pending.pop()) {
    fillCopy(source, copies.get(source), copyOf);
  }
  return root;
}

function fillCopy(source: object, copy: Container | undefined, copyOf: (item: unknown) => unknown): void {
  if (Array.isArray(copy) && Array.isArray(source)) {
    for (const item of source as unknown[]) copy.push(copyOf(item));
    return;
  }
  if (copy === undefined || Array.isArray(copy)) return;
  for (const key of Object.keys(source)) {
    const member = isSecretName(key) ? REDACTED : copyOf(ownValue(source, key));
    // Assignment would make a `__proto__` key the copy's prototype instead of a member.
    Object.defineProperty(copy, key, { value: member, writable: true, enumerable: true, configurable: true });
  }
}
