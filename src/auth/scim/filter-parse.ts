// Parses a SCIM filter (and, for patch-path.ts, a PATCH path's parts) into a canonical ScimFilter.
import type { Comparison, FilterValue, ScimFilter } from './scim-filter.js';
import { badRequest, type ScimType } from './scim-error.js';
import type { ScimAttribute } from './user-schema.js';
import { TokenReader, type Token } from './filter-tokens.js';
import { comparedAttribute, resolveAttributeName, resolveSubAttribute, type AttributeName, type NameError } from './attribute-names.js';

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

/** Parses the `filter` query parameter; every problem is a 400 `invalidFilter` saying where. */
export function parseFilter(text: string): ScimFilter {
  const parser = new FilterParser(text, 'invalidFilter');
  const filter = parser.filter();
  parser.end();
  return filter;
}

/** Names inside `[...]` are the complex attribute's own; `undefined` is the whole User. */
type Scope = ScimAttribute | undefined;

/** A recursive-descent reader over the tokens of one filter or path. */
export class FilterParser extends TokenReader {
  private comparisons = 0;

  constructor(text: string, scimType: ScimType) {
    super(text, scimType, FILTER_LIMITS.length);
  }

  /** FILTER over the whole User: `or` binds loosest, then `and`, then `not`, groups and comparisons. */
  filter(scope: Scope = undefined, depth = 0): ScimFilter {
    let left = this.conjunction(scope, depth);
    while (this.keyword('or')) left = { kind: 'or', left, right: this.conjunction(scope, depth) };
    return left;
  }

  /** attrPath: `[URN:]name[.sub]`, resolved without case against user-schema.ts. */
  attributeName(): AttributeName {
    const token = this.take('word', 'an attribute name');
    return resolveAttributeName(token.text, this.errorAt(token));
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
    return resolveSubAttribute(name, token.text.slice(1), this.errorAt(token));
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
    if (scope !== undefined) return this.comparison(resolveSubAttribute({ attribute: scope.name, definition: scope }, token.text, this.errorAt(token)).name);
    const name = resolveAttributeName(token.text, this.errorAt(token));
    if (this.next('[')) return this.valuePath(name, depth);
    return this.comparison(comparedAttribute(name, this.errorAt(token)));
  }

  /**
   * `emails[type eq "work"]`, and Microsoft Entra's `emails[type eq "work"].value eq "x"`, read as
   * `emails[type eq "work" and value eq "x"]`: both conditions on the same address.
   */
  private valuePath(name: AttributeName, depth: number): ScimFilter {
    const filter = this.valueFilter(name, depth);
    if (!this.nextIsSubAttribute()) return { kind: 'valuePath', attribute: name.attribute, filter };
    const sub = this.trailingSubAttribute(name);
    return { kind: 'valuePath', attribute: name.attribute, filter: { kind: 'and', left: filter, right: this.comparison(sub.name) } };
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
    const token = this.take(['string', 'word'], 'a value ("text", a number, true, false or null)');
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

  private enter(depth: number, token: Token): void {
    if (depth > FILTER_LIMITS.depth) throw badRequest(this.scimType, `the ${this.noun()} nests deeper than ${FILTER_LIMITS.depth} levels of (), not () and [] (at character ${token.at + 1})`);
  }

  private errorAt(token: Token): NameError {
    return (detail) => this.error(detail, token);
  }
}
