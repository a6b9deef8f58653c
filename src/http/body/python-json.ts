/**
 * JSON parsing that answers exactly like the FastAPI service we replace, which parsed request
 * bodies with CPython's `json` module (the `_json` C scanner driven by `json/decoder.py`,
 * Python 3.11/3.12).
 *
 * Valid JSON takes the native `JSON.parse` path and pays only a bounded depth walk of the parsed
 * value. Only texts that `JSON.parse` rejects reach the hand-written scanner below, which is
 * needed for two reasons: Python accepts `NaN`, `Infinity` and `-Infinity`, and its 422 bodies
 * carry Python's own error message and position, which clients may have come to rely on.
 */

/** The outcome of {@link parseJsonLikePython}. */
export type JsonParseResult =
  | { kind: 'value'; value: unknown }
  /** `message` is Python's `JSONDecodeError.msg`; `position` its `pos`, in code points. */
  | { kind: 'invalid'; position: number; message: string }
  /** Nested deeper than {@link MAX_JSON_DEPTH}: where Python raises RecursionError (a 400). */
  | { kind: 'too_deep' };

/** The deepest nesting of objects and arrays accepted; `[]` is depth 1, a scalar depth 0. */
export const MAX_JSON_DEPTH = 512;

/**
 * Parses `text` the way Python's `json.loads` does once the body bytes were decoded as UTF-8
 * (a leading BOM already stripped by the caller, as Python's `utf-8-sig` decoding does).
 *
 * @returns the value (with `NaN` and `±Infinity` where Python accepts them), Python's error
 * message and code-point position, or `too_deep`.
 */
export function parseJsonLikePython(text: string): JsonParseResult {
  if (certainlyNotJson(text)) return parseSlowly(text);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return parseSlowly(text);
  }
  return nestsDeeperThan(value, MAX_JSON_DEPTH) ? { kind: 'too_deep' } : { kind: 'value', value };
}

/**
 * An object whose text does not end with `}` (a body cut short, the usual malformed body) cannot
 * be JSON. JSON.parse is skipped then: the SyntaxError V8 builds on rejecting a text (it walks the
 * stack to place it) costs more than our scanner's run over a small body. Anything else still goes through JSON.parse first.
 */
function certainlyNotJson(text: string): boolean {
  let first = 0;
  while (first < text.length && isWhitespace(text.charCodeAt(first))) first++;
  if (text.charCodeAt(first) !== OPEN_BRACE) return false;
  let last = text.length - 1;
  while (last > first && isWhitespace(text.charCodeAt(last))) last--;
  return text.charCodeAt(last) !== CLOSE_BRACE;
}

/** Walks containers only, and stops as soon as the limit is crossed, so huge values stay cheap. */
function nestsDeeperThan(value: unknown, remaining: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (remaining === 0) return true;
  const children: unknown[] = Array.isArray(value) ? value : Object.values(value);
  for (const child of children) {
    if (nestsDeeperThan(child, remaining - 1)) return true;
  }
  return false;
}

function parseSlowly(text: string): JsonParseResult {
  const scanner = new PythonJsonScanner(text);
  const value = scanner.decode();
  if (value !== FAILED) return { kind: 'value', value };
  return scanner.failure ?? { kind: 'too_deep' };
}

/**
 * What a scanning method returns once decoding has failed; the reason is left on the scanner.
 * Failure travels back up as a value, not as an exception: V8 records where every throw happens
 * (a walk of the stack), and a scanner that keeps throwing is never optimized, so a thrown error
 * made a malformed body cost several times more than parsing it.
 */
const FAILED: unique symbol = Symbol('failed');
type Failed = typeof FAILED;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const DIGIT_0 = 0x30;
const DIGIT_1 = 0x31;
const DIGIT_9 = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const LOWER_U = 0x75;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
/** Past the end of the text; matches no character. */
const NONE = -1;

/** The non-`u` escapes `scanstring_unicode` accepts. */
const SIMPLE_ESCAPES: ReadonlyMap<number, string> = new Map([
  [QUOTE, '"'],
  [BACKSLASH, '\\'],
  [0x2f, '/'],
  [0x62, '\b'],
  [0x66, '\f'],
  [0x6e, '\n'],
  [0x72, '\r'],
  [0x74, '\t'],
]);

/** The literals `scan_once_unicode` recognises by their first character, with their values. */
const LITERALS: ReadonlyMap<number, readonly [string, unknown]> = new Map<number, readonly [string, unknown]>([
  [0x6e, ['null', null]],
  [0x74, ['true', true]],
  [0x66, ['false', false]],
  [0x4e, ['NaN', Number.NaN]],
  [0x49, ['Infinity', Number.POSITIVE_INFINITY]],
  [MINUS, ['-Infinity', Number.NEGATIVE_INFINITY]],
]);

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function isDigit(c: number): boolean {
  return c >= DIGIT_0 && c <= DIGIT_9;
}

function hexValue(c: number): number {
  if (isDigit(c)) return c - DIGIT_0;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return NONE;
}

/**
 * A port of `scan_once_unicode` and friends from CPython's `Modules/_json.c`, kept close to the
 * original (same index arithmetic, same bounds checks) because the exact error position depends
 * on them. Python indexes its strings by code point, so the text is first unpacked into code
 * points; `offsets` maps them back to UTF-16 for slicing out string contents.
 *
 * Each scanning method takes the index where its term starts and leaves the index just past the
 * term in `end`, like the C functions' `next_idx_ptr`; once decoding fails it returns FAILED.
 */
class PythonJsonScanner {
  private readonly codePoints: Uint32Array;
  private readonly offsets: Uint32Array;
  private readonly length: number;
  private end = 0;
  /** Why decoding failed, once a method has returned FAILED; undefined for Python's RecursionError. */
  failure: { kind: 'invalid'; message: string; position: number } | undefined;

  constructor(private readonly text: string) {
    const codePoints = new Uint32Array(text.length);
    const offsets = new Uint32Array(text.length + 1);
    let count = 0;
    for (let unit = 0; unit < text.length; count++) {
      const c = text.codePointAt(unit) ?? 0;
      codePoints[count] = c;
      offsets[count] = unit;
      unit += c > 0xffff ? 2 : 1;
    }
    offsets[count] = text.length;
    this.codePoints = codePoints;
    this.offsets = offsets;
    this.length = count;
  }

  /** `JSONDecoder.decode`: one term surrounded by optional whitespace. */
  decode(): unknown {
    const value = this.scanOnce(this.skipWhitespace(0), 0);
    if (value === FAILED) return FAILED;
    const end = this.skipWhitespace(this.end);
    if (end !== this.length) return this.fail('Extra data', end);
    return value;
  }

  private at(index: number): number {
    return index < this.length ? (this.codePoints[index] ?? NONE) : NONE;
  }

  private slice(start: number, end: number): string {
    return this.text.slice(this.offsets[start], this.offsets[end]);
  }

  private skipWhitespace(index: number): number {
    let i = index;
    while (i < this.length && isWhitespace(this.at(i))) i++;
    return i;
  }

  /**
   * Where `_json.c` raises StopIteration, which `raw_decode` turns into this message at the
   * index the StopIteration carries, however deep the scanner was.
   */
  private expectingValue(index: number): Failed {
    return this.fail('Expecting value', index);
  }

  /** Python's `JSONDecodeError(msg, doc, pos)`, minus the document. */
  private fail(message: string, position: number): Failed {
    this.failure = { kind: 'invalid', message, position };
    return FAILED;
  }

  /** `depth` counts the containers already open around this term. */
  private scanOnce(index: number, depth: number): unknown {
    if (index >= this.length) return this.expectingValue(index);
    const c = this.at(index);
    if (c === QUOTE) return this.scanString(index + 1);
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      // Python's RecursionError strikes on the way down, before the container's contents are
      // read: a syntax error further on is never reached, one earlier in the text wins.
      if (depth >= MAX_JSON_DEPTH) return FAILED;
      return c === OPEN_BRACE ? this.parseObject(index + 1, depth + 1) : this.parseArray(index + 1, depth + 1);
    }
    const literal = LITERALS.get(c);
    if (literal !== undefined && this.startsWith(literal[0], index)) {
      this.end = index + literal[0].length;
      return literal[1];
    }
    return this.matchNumber(index);
  }

  private startsWith(word: string, index: number): boolean {
    if (index + word.length > this.length) return false;
    for (let i = 0; i < word.length; i++) {
      if (this.at(index + i) !== word.charCodeAt(i)) return false;
    }
    return true;
  }

  /** `_match_number_unicode`, including its backtracking over a bare exponent marker. */
  private matchNumber(start: number): number | Failed {
    const last = this.length - 1;
    let index = start;
    if (this.at(index) === MINUS) {
      index++;
      if (index > last) return this.expectingValue(start);
    }
    const first = this.at(index);
    if (first >= DIGIT_1 && first <= DIGIT_9) {
      index++;
      while (index <= last && isDigit(this.at(index))) index++;
    } else if (first === DIGIT_0) {
      index++;
    } else {
      return this.expectingValue(start);
    }
    if (index < last && this.at(index) === DOT && isDigit(this.at(index + 1))) {
      index += 2;
      while (index <= last && isDigit(this.at(index))) index++;
    }
    index = this.matchExponent(index);
    this.end = index;
    // Python keeps integers exact; a JS number is what JSON.parse would have given anyway.
    return Number(this.slice(start, index));
  }

  private matchExponent(start: number): number {
    const last = this.length - 1;
    const marker = this.at(start);
    if (start >= last || (marker !== LOWER_E && marker !== UPPER_E)) return start;
    let index = start + 1;
    const sign = this.at(index);
    if (index < last && (sign === MINUS || sign === PLUS)) index++;
    while (index <= last && isDigit(this.at(index))) index++;
    return isDigit(this.at(index - 1)) ? index : start;
  }

  /** `scanstring_unicode` in strict mode; `start` is just past the opening quote. */
  private scanString(start: number): string | Failed {
    const begin = start - 1;
    let end = start;
    let result = '';
    for (;;) {
      const next = this.findQuoteOrBackslash(end);
      if (next === FAILED) return FAILED;
      if (next >= this.length) return this.fail('Unterminated string starting at', begin);
      result += this.slice(end, next);
      if (this.at(next) === QUOTE) {
        this.end = next + 1;
        return result;
      }
      if (next + 1 === this.length) return this.fail('Unterminated string starting at', begin);
      const escaped = this.scanEscape(next + 1);
      if (escaped === FAILED) return FAILED;
      result += escaped;
      end = this.end;
    }
  }

  private findQuoteOrBackslash(start: number): number | Failed {
    let next = start;
    for (; next < this.length; next++) {
      const c = this.at(next);
      if (c === QUOTE || c === BACKSLASH) break;
      if (c <= 0x1f) return this.fail('Invalid control character at', next);
    }
    return next;
  }

  /** `index` is the character after the backslash. */
  private scanEscape(index: number): string | Failed {
    const c = this.at(index);
    if (c !== LOWER_U) {
      const replacement = SIMPLE_ESCAPES.get(c);
      if (replacement === undefined) return this.fail('Invalid \\escape', index - 1);
      this.end = index + 1;
      return replacement;
    }
    const digits = index + 1;
    let end = digits + 4;
    // `>=`, not `>`: like _json.c, four hex digits ending the text are an escape error,
    // not an unterminated string.
    if (end >= this.length) return this.fail('Invalid \\uXXXX escape', index);
    let code = this.readHex4(digits);
    if (code === FAILED) return FAILED;
    const pairFollows = end + 6 < this.length && this.at(end) === BACKSLASH && this.at(end + 1) === LOWER_U;
    if (code >= 0xd800 && code <= 0xdbff && pairFollows) {
      // A bad second escape is reported here, not when it is read on its own: same message,
      // and the same position (its `u`) either way.
      const low = this.readHex4(end + 2);
      if (low === FAILED) return FAILED;
      if (low >= 0xdc00 && low <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        end += 6;
      }
    }
    this.end = end;
    return String.fromCodePoint(code);
  }

  /** Reports the error at the `u`, as _json.c does, whichever digit is wrong. */
  private readHex4(start: number): number | Failed {
    let code = 0;
    for (let i = start; i < start + 4; i++) {
      const digit = hexValue(this.at(i));
      if (digit === NONE) return this.fail('Invalid \\uXXXX escape', start - 1);
      code = (code << 4) | digit;
    }
    return code;
  }

  /** `_parse_object_unicode` without hooks; `start` is just past the `{`. */
  private parseObject(start: number, depth: number): Record<string, unknown> | Failed {
    const result: Record<string, unknown> = {};
    let index = this.skipWhitespace(start);
    if (this.at(index) === CLOSE_BRACE) {
      this.end = index + 1;
      return result;
    }
    for (;;) {
      if (this.at(index) !== QUOTE) {
        return this.fail('Expecting property name enclosed in double quotes', index);
      }
      const key = this.scanString(index + 1);
      if (key === FAILED) return FAILED;
      index = this.skipWhitespace(this.end);
      if (this.at(index) !== COLON) return this.fail("Expecting ':' delimiter", index);
      const value = this.scanOnce(this.skipWhitespace(index + 1), depth);
      if (value === FAILED) return FAILED;
      setOwn(result, key, value);
      index = this.skipWhitespace(this.end);
      if (this.at(index) === CLOSE_BRACE) break;
      if (this.at(index) !== COMMA) return this.fail("Expecting ',' delimiter", index);
      index = this.skipWhitespace(index + 1);
    }
    this.end = index + 1;
    return result;
  }

  /** `_parse_array_unicode`; `start` is just past the `[`. */
  private parseArray(start: number, depth: number): unknown[] | Failed {
    const result: unknown[] = [];
    let index = this.skipWhitespace(start);
    if (this.at(index) === CLOSE_BRACKET) {
      this.end = index + 1;
      return result;
    }
    for (;;) {
      const value = this.scanOnce(index, depth);
      if (value === FAILED) return FAILED;
      result.push(value);
      index = this.skipWhitespace(this.end);
      if (this.at(index) === CLOSE_BRACKET) break;
      if (this.at(index) !== COMMA) return this.fail("Expecting ',' delimiter", index);
      index = this.skipWhitespace(index + 1);
    }
    this.end = index + 1;
    return result;
  }
}

/**
 * Assignment would turn a `__proto__` key into a prototype change; JSON.parse makes it an own
 * data property, and so must we.
 */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}
