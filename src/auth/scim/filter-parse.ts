import type { Comparison, FilterValue, ScimFilter } from './scim-filter.js';
import { badRequest, type ScimError, type ScimType } from './scim-error.js';
import { COMMON_ATTRIBUTES, ENTERPRISE_ATTRIBUTES, ENTERPRISE_SCHEMA, USER_ATTRIBUTES, USER_SCHEMA, findAttribute, type ScimAttribute } from './user-schema.js';

/**
 * The `filter` of `GET /Users` (RFC 7644 §3.4.2.2, figure 1) read into a `ScimFilter` whose names are
 * canonical (user-schema.ts). PATCH paths (patch-path.ts) use the same parser with their own error.
 *
 * A filter is untrusted: its length is bounded before it is read, comparisons and nesting while it
 * is read, so the recursion below is never deeper than FILTER_LIMITS.depth levels, whatever the text.
 */
export const FILTER_LIMITS = { length: 1000, comparisons: 10, depth: 5 } as const;

const COMPARISONS: readonly string[] = ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'] satisfies readonly Comparison[];
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
const LITERALS: Readonly<Record<string, FilterValue>> = { true: true, false: false, null: null };

const metaPart = (name: string, type: ScimAttribute['type']): ScimAttribute => ({
  name, type, description: `meta.${name}, set by the service.`, multiValued: false, required: false, caseExact: false, mutability: 'readOnly', returned: 'default', uniqueness: 'none',
});
/** `meta` (RFC 7643 §3.1) is the service's: a filter may read it, a PATCH never writes it. */
const META: ScimAttribute = { ...metaPart('meta', 'complex'), subAttributes: [metaPart('created', 'dateTime'), metaPart('lastModified', 'dateTime'), metaPart('resourceType', 'string')] };
const CORE: readonly ScimAttribute[] = [...COMMON_ATTRIBUTES, ...USER_ATTRIBUTES, META];

/** Parses the `filter` query parameter; every problem is a 400 `invalidFilter` saying where. */
export function parseFilter(text: string): ScimFilter {
  const parser = new FilterParser(text, 'invalidFilter');
  const filter = parser.filter();
  parser.end();
  return filter;
}

/** An attribute as named in a filter or path: canonical, an extension's prefixed by its schema URN. */
export interface AttributeName {
  readonly attribute: string;
  readonly definition: ScimAttribute;
  readonly subAttribute?: ScimAttribute;
}

interface Token {
  readonly kind: '(' | ')' | '[' | ']' | 'string' | 'word';
  readonly text: string;
  readonly at: number;
}

/** Names inside `[...]` are the complex attribute's own; `undefined` is the whole User. */
type Scope = ScimAttribute | undefined;

/** A recursive-descent reader over the tokens of one filter or path. */
export class FilterParser {
  private readonly tokens: readonly Token[];
  private index = 0;
  private comparisons = 0;

  constructor(
    private readonly text: string,
    private readonly scimType: ScimType,
  ) {
    const noun = this.noun();
    if (text.length > FILTER_LIMITS.length) throw badRequest(scimType, `the ${noun} is longer than ${FILTER_LIMITS.length} characters`);
    if (text.trim() === '') throw badRequest(scimType, `the ${noun} is empty`);
    this.tokens = this.tokenize();
  }

  /** FILTER over the whole User: `or` binds loosest, then `and`, then `not`, groups and comparisons. */
  filter(scope: Scope = undefined, depth = 0): ScimFilter {
    let left = this.conjunction(scope, depth);
    while (this.keyword('or')) left = { kind: 'or', left, right: this.conjunction(scope, depth) };
    return left;
  }

  /** attrPath: `[URN:]name[.sub]`, resolved without case against user-schema.ts. */
  attributeName(): AttributeName {
    return this.resolve(this.take('word', 'an attribute name'));
  }

  /** `[valFilter]` after `name`, which must be a multi-valued complex attribute. */
  valueFilter(name: AttributeName, depth = 0): ScimFilter {
    const open = this.take('[', '"["');
    if (name.subAttribute !== undefined || !name.definition.multiValued || !name.definition.subAttributes?.length) {
      throw this.error(`"${name.attribute}" is not a multi-valued complex attribute, so it takes no [filter]`, open);
    }
    this.enter(depth + 1, open);
    const filter = this.filter(name.definition, depth + 1);
    this.take(']', '"]"');
    return filter;
  }

  /** `.subAttr` after a value path, as PATCH allows (`emails[type eq "work"].value`). */
  trailingSubAttribute(name: AttributeName): ScimAttribute {
    const token = this.take('word', 'a sub-attribute such as ".value"');
    if (!token.text.startsWith('.')) throw this.error(`unexpected "${token.text}"`, token);
    return this.subAttributeOf(name, token.text.slice(1), token);
  }

  next(kind: Token['kind']): boolean {
    return this.tokens[this.index]?.kind === kind;
  }

  atEnd(): boolean {
    return this.index >= this.tokens.length;
  }

  /** Trailing text is refused, never ignored: `userName eq "a" x` is not `userName eq "a"`. */
  end(): void {
    const token = this.tokens[this.index];
    if (token !== undefined) throw this.error(`unexpected "${token.text}"`, token);
  }

  private conjunction(scope: Scope, depth: number): ScimFilter {
    let left = this.unary(scope, depth);
    while (this.keyword('and')) left = { kind: 'and', left, right: this.unary(scope, depth) };
    return left;
  }

  private unary(scope: Scope, depth: number): ScimFilter {
    if (this.keyword('not')) return { kind: 'not', filter: this.group(scope, depth) };
    if (this.next('(')) return this.group(scope, depth);
    return this.attributeExpression(scope, depth);
  }

  private group(scope: Scope, depth: number): ScimFilter {
    const open = this.take('(', '"("');
    this.enter(depth + 1, open);
    const inner = this.filter(scope, depth + 1);
    this.take(')', '")"');
    return inner;
  }

  private attributeExpression(scope: Scope, depth: number): ScimFilter {
    const token = this.take('word', 'an attribute name');
    if (scope !== undefined) return this.comparison(this.subAttributeOf({ attribute: scope.name, definition: scope }, token.text, token).name);
    const name = this.resolve(token);
    if (this.next('[')) return { kind: 'valuePath', attribute: name.attribute, filter: this.valueFilter(name, depth) };
    return this.comparison(this.filterAttribute(name, token));
  }

  private comparison(attribute: string): ScimFilter {
    const token = this.take('word', 'an operator (eq, ne, co, sw, ew, gt, ge, lt, le, pr)');
    const op = token.text.toLowerCase();
    if (op !== 'pr' && !COMPARISONS.includes(op)) throw this.error(`unknown operator "${token.text}"`, token);
    this.comparisons += 1;
    if (this.comparisons > FILTER_LIMITS.comparisons) throw badRequest(this.scimType, `the ${this.noun()} has more than ${FILTER_LIMITS.comparisons} comparisons`);
    if (op === 'pr') return { kind: 'present', attribute };
    return { kind: 'compare', op: op as Comparison, attribute, value: this.compValue() };
  }

  /** compValue: a JSON string, number, true, false or null (the literals without case). */
  private compValue(): FilterValue {
    const token = this.tokens[this.index];
    if (token === undefined || (token.kind !== 'string' && token.kind !== 'word')) throw this.error(`expected a value ("text", a number, true, false or null)${found(token)}`, token);
    this.index += 1;
    if (token.kind === 'string') return this.jsonString(token);
    const literal = token.text.toLowerCase();
    if (Object.hasOwn(LITERALS, literal)) return LITERALS[literal] ?? null;
    const number = JSON_NUMBER.test(token.text) ? Number(token.text) : Number.NaN;
    if (!Number.isFinite(number)) throw this.error(`"${token.text}" is not a value (strings take double quotes)`, token);
    return number;
  }

  private jsonString(token: Token): string {
    try {
      return JSON.parse(token.text) as string;
    } catch {
      throw this.error('invalid string (bad escape or control character)', token);
    }
  }

  private resolve(token: Token): AttributeName {
    const colon = token.text.lastIndexOf(':');
    const schema = colon < 0 ? USER_SCHEMA : token.text.slice(0, colon);
    const [name = '', sub, ...deeper] = token.text.slice(colon + 1).split('.');
    const extension = sameText(schema, ENTERPRISE_SCHEMA);
    if (!extension && !sameText(schema, USER_SCHEMA)) throw this.error(`unknown schema "${schema}"`, token);
    const definition = findAttribute(extension ? ENTERPRISE_ATTRIBUTES : CORE, name);
    if (definition === undefined || deeper.length > 0) throw this.error(`unknown attribute "${token.text}"`, token);
    const parent = { attribute: extension ? `${ENTERPRISE_SCHEMA}:${definition.name}` : definition.name, definition };
    return sub === undefined ? parent : { ...parent, subAttribute: this.subAttributeOf(parent, sub, token) };
  }

  private subAttributeOf(parent: AttributeName, name: string, token: Token): ScimAttribute {
    const found = findAttribute(parent.definition.subAttributes ?? [], name);
    if (found === undefined) throw this.error(`unknown sub-attribute "${name}" of "${parent.attribute}"`, token);
    return found;
  }

  /** A complex attribute compares by a sub-attribute; a multi-valued one alone means its `value`. */
  private filterAttribute(name: AttributeName, token: Token): string {
    if (name.subAttribute !== undefined) return `${name.attribute}.${name.subAttribute.name}`;
    if (name.definition.type !== 'complex') return name.attribute;
    const value = name.definition.multiValued ? findAttribute(name.definition.subAttributes ?? [], 'value') : undefined;
    if (value === undefined) throw this.error(`"${name.attribute}" is complex: name one of its sub-attributes`, token);
    return `${name.attribute}.${value.name}`;
  }

  private enter(depth: number, token: Token): void {
    if (depth > FILTER_LIMITS.depth) throw badRequest(this.scimType, `the ${this.noun()} nests deeper than ${FILTER_LIMITS.depth} levels of (), not () and [] (at character ${token.at + 1})`);
  }

  private keyword(word: string): boolean {
    const token = this.tokens[this.index];
    if (token?.kind !== 'word' || token.text.toLowerCase() !== word) return false;
    this.index += 1;
    return true;
  }

  private take(kind: Token['kind'], expected: string): Token {
    const token = this.tokens[this.index];
    if (token?.kind !== kind) throw this.error(`expected ${expected}${found(token)}`, token);
    this.index += 1;
    return token;
  }

  private tokenize(): Token[] {
    const tokens: Token[] = [];
    for (let at = 0; at < this.text.length; ) {
      const char = this.text.charAt(at);
      if (/\s/.test(char)) at += 1;
      else if ('()[]'.includes(char)) tokens.push({ kind: char as Token['kind'], text: char, at: at++ });
      else {
        const end = char === '"' ? closingQuote(this.text, at) : wordEnd(this.text, at);
        if (end < 0) throw this.error('unterminated string', { kind: 'string', text: '"', at });
        tokens.push({ kind: char === '"' ? 'string' : 'word', text: this.text.slice(at, end), at });
        at = end;
      }
    }
    return tokens;
  }

  private error(detail: string, token: Token | undefined): ScimError {
    const where = token === undefined ? 'at the end' : `at character ${token.at + 1}`;
    return badRequest(this.scimType, `${detail} ${where} of the ${this.noun()}`);
  }

  private noun(): string {
    return this.scimType === 'invalidFilter' ? 'filter' : 'path';
  }
}

const sameText = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();
const found = (token: Token | undefined): string => (token === undefined ? '' : `, found "${token.text}"`);

/** Just past the closing quote, or -1; a backslash escapes the character after it. */
function closingQuote(text: string, start: number): number {
  for (let at = start + 1; at < text.length; at += 1) {
    if (text.charAt(at) === '\\') at += 1;
    else if (text.charAt(at) === '"') return at + 1;
  }
  return -1;
}

function wordEnd(text: string, start: number): number {
  let at = start;
  while (at < text.length && !/[\s()[\]"]/.test(text.charAt(at))) at += 1;
  return at;
}
