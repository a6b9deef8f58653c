import { unstorableKind, wellFormedText } from '../../db/text.js';
import { REDACTED, type ValidationItem } from './fastapi-validation.js';
import { isSecretName } from './secret-names.js';

/**
 * The boundary's guard against text no database can take (NUL, lone surrogates; see db/text.ts):
 * every string a route declared (path, query, body at any depth) is checked once, here, before
 * any handler runs, so no such string ever reaches a query and both databases answer the same.
 */

const NUL_PATTERN = '^[^\\x00]*$';

/** Every string in `value` (object members and array items, at any depth), with where it is. */
function* stringsIn(value: unknown, at: (string | number)[]): Generator<[string, (string | number)[]]> {
  const pending: [unknown, (string | number)[]][] = [[value, at]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, loc] = next;
    if (typeof item === 'string') yield [item, loc];
    else if (Array.isArray(item)) for (let i = item.length - 1; i >= 0; i--) pending.push([item[i], [...loc, i]]);
    else if (typeof item === 'object' && item !== null) {
      for (const key of Object.keys(item).reverse()) pending.push([(item as Record<string, unknown>)[key], [...loc, key]]);
    }
  }
}

/**
 * The item Pydantic answers for a lone surrogate (`string_unicode`), or for NUL the one a field
 * declared with `pattern=r'^[^\x00]*$'` answers. A secret is echoed as "[redacted]"; a lone
 * surrogate as U+FFFD, so the answer stays valid UTF-8.
 */
function itemFor(text: string, loc: (string | number)[], kind: 'nul' | 'surrogate'): ValidationItem {
  const secret = loc.some((part) => typeof part === 'string' && isSecretName(part));
  const input = secret ? REDACTED : wellFormedText(text);
  if (kind === 'surrogate') {
    return { type: 'string_unicode', loc, msg: 'Input should be a valid string, unable to parse raw data as a unicode string', input };
  }
  return { type: 'string_pattern_mismatch', loc, msg: `String should match pattern '${NUL_PATTERN}'`, input, ctx: { pattern: NUL_PATTERN } };
}

/** One 422 item per unstorable string in `value`, located under `root` (`body`, `query`). */
export function unstorableItems(value: unknown, root: 'body' | 'query'): ValidationItem[] {
  const items: ValidationItem[] = [];
  for (const [text, loc] of stringsIn(value, [root])) {
    const kind = unstorableKind(text);
    if (kind !== undefined) items.push(itemFor(text, loc, kind));
  }
  return items;
}

/** Whether any string in `value` is unstorable: an id that no record can have. */
export function holdsUnstorableText(value: unknown): boolean {
  for (const [text] of stringsIn(value, [])) if (unstorableKind(text) !== undefined) return true;
  return false;
}
