import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, parseJsonLikePython, type JsonParseResult } from '../../../src/http/body/python-json.js';

/** What scripts/gen-python-json-cases.py reports for one text (see its docstring). */
type PythonOutcome =
  | { kind: 'invalid'; message: string; position: number }
  | { kind: 'value'; value: unknown }
  | { kind: 'too_deep' }
  | { kind: 'error'; error: string };

type FixtureCase = PythonOutcome & { input: string };

const ORACLE_SCRIPT = fileURLToPath(new URL('../../../scripts/gen-python-json-cases.py', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../../fixtures/python-json-cases.json', import.meta.url));

const cases = JSON.parse(readFileSync(FIXTURE, 'utf8')) as FixtureCase[];

/** The generator's tagged form of a parsed value, so NaN, -0 and key order compare cleanly. */
function tag(value: unknown): unknown {
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return { $float: 'nan' };
    if (!Number.isFinite(value)) return { $float: value > 0 ? 'inf' : '-inf' };
    return value === 0 ? 0 : value;
  }
  if (Array.isArray(value)) return value.map(tag);
  if (typeof value === 'object' && value !== null) {
    return { $object: sortEntries(Object.entries(value).map(([key, item]) => [key, tag(item)])) };
  }
  return value;
}

/** Python keeps insertion order, JavaScript puts integer-like keys first: compare sorted. */
function normalizeTagged(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalizeTagged);
  if (typeof value !== 'object' || value === null) return value;
  const entries = (value as { $object?: [string, unknown][] }).$object;
  if (entries === undefined) return value;
  return { $object: sortEntries(entries.map(([key, item]) => [key, normalizeTagged(item)])) };
}

function sortEntries(entries: [string, unknown][]): [string, unknown][] {
  return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Our result in the oracle's terms. */
function asOutcome(result: JsonParseResult): PythonOutcome {
  if (result.kind === 'value') return { kind: 'value', value: tag(result.value) };
  return result;
}

function expectedOutcome(outcome: PythonOutcome): PythonOutcome {
  return outcome.kind === 'value' ? { kind: 'value', value: normalizeTagged(outcome.value) } : outcome;
}

/** Runs python3 once for a whole batch of texts. */
function askPython(texts: readonly string[]): PythonOutcome[] {
  const run = spawnSync('python3', [ORACLE_SCRIPT, '--oracle'], {
    input: JSON.stringify(texts),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.error !== undefined) {
    throw new Error(`python3 is required on PATH for the differential test against Python's json module: ${run.error.message}`);
  }
  if (run.status !== 0) throw new Error(`the python3 oracle failed (status ${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout) as PythonOutcome[];
}

function nested(depth: number, inner = ''): string {
  return '['.repeat(depth) + inner + ']'.repeat(depth);
}

function nestedObjects(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

describe('parseJsonLikePython: the table generated from python3', () => {
  it('has enough cases to mean something', () => {
    expect(cases.filter((c) => c.kind === 'invalid').length).toBeGreaterThanOrEqual(40);
  });

  it.each(cases.map((c) => [JSON.stringify(c.input), c] as const))('%s', (_name, c) => {
    const { input, ...outcome } = c;
    expect(asOutcome(parseJsonLikePython(input))).toEqual(expectedOutcome(outcome));
  });
});

describe('parseJsonLikePython: values', () => {
  it('returns what JSON.parse returns for valid JSON', () => {
    const text = '{"school_id":"s","username":"u","password":"p","n":[1,2.5,-0,true,null]}';
    expect(parseJsonLikePython(text)).toEqual({ kind: 'value', value: JSON.parse(text) });
  });

  it("accepts Python's non-finite constants", () => {
    expect(parseJsonLikePython(' [NaN, Infinity, -Infinity] ')).toEqual({
      kind: 'value',
      value: [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY],
    });
  });

  it('keeps a __proto__ key an own member in the slow path, as JSON.parse does', () => {
    const result = parseJsonLikePython('{"__proto__": {"polluted": true}, "n": NaN}');
    if (result.kind !== 'value') throw new Error(`expected a value, got ${result.kind}`);
    const value = result.value as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('decodes escapes and surrogate pairs in the slow path', () => {
    const result = parseJsonLikePython('["\\ud83d\\ude00\\n\\/\\u00e9", "\\ud800", "\\ud800\\u0041", "😀", NaN]');
    expect(result).toEqual({ kind: 'value', value: ['😀\n/é', '\ud800', '\ud800A', '😀', Number.NaN] });
  });

  it('lets the last of duplicate keys win, like both Python and JSON.parse', () => {
    expect(parseJsonLikePython('{"a": 1, "a": NaN}')).toEqual({ kind: 'value', value: { a: Number.NaN } });
  });

  it('parses numbers like Python, exponent backtracking included', () => {
    expect(parseJsonLikePython('[1E5, -0.5e-3, 1e400, -1e400, 10, NaN]')).toEqual({
      kind: 'value',
      value: [1e5, -0.5e-3, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 10, Number.NaN],
    });
  });
});

describe('parseJsonLikePython: nesting depth', () => {
  it(`accepts ${MAX_JSON_DEPTH} levels and refuses one more (fast path)`, () => {
    expect(parseJsonLikePython(nested(MAX_JSON_DEPTH)).kind).toBe('value');
    expect(parseJsonLikePython(nested(MAX_JSON_DEPTH + 1))).toEqual({ kind: 'too_deep' });
    expect(parseJsonLikePython(nestedObjects(MAX_JSON_DEPTH)).kind).toBe('value');
    expect(parseJsonLikePython(nestedObjects(MAX_JSON_DEPTH + 1))).toEqual({ kind: 'too_deep' });
  });

  it('counts depth the same way in the slow path', () => {
    expect(parseJsonLikePython(nested(MAX_JSON_DEPTH, 'NaN')).kind).toBe('value');
    expect(parseJsonLikePython(nested(MAX_JSON_DEPTH + 1, 'NaN'))).toEqual({ kind: 'too_deep' });
  });

  it('survives nesting far beyond the limit without overflowing the stack', () => {
    expect(parseJsonLikePython(nested(200_000))).toEqual({ kind: 'too_deep' });
    expect(parseJsonLikePython('['.repeat(200_000))).toEqual({ kind: 'too_deep' });
    expect(parseJsonLikePython(nested(200_000, 'NaN'))).toEqual({ kind: 'too_deep' });
  });

  it('finds a deep member of a wide value', () => {
    const wide = `[${'1,'.repeat(10_000)}${nested(MAX_JSON_DEPTH)}]`;
    expect(parseJsonLikePython(wide)).toEqual({ kind: 'too_deep' });
  });

  it('reports whichever comes first in the text, as Python raises whichever it meets first', () => {
    // The syntax error is met on the way down, before the limit: Python's JSONDecodeError.
    expect(parseJsonLikePython(`[1 ${nested(MAX_JSON_DEPTH + 1)}]`)).toEqual({
      kind: 'invalid',
      message: "Expecting ',' delimiter",
      position: 3,
    });
    // The limit is crossed before the error is reached: Python's RecursionError.
    expect(parseJsonLikePython(`${nested(MAX_JSON_DEPTH + 1)} x`)).toEqual({ kind: 'too_deep' });
    expect(parseJsonLikePython(`${'['.repeat(MAX_JSON_DEPTH + 1)}1,]`)).toEqual({ kind: 'too_deep' });
    expect(parseJsonLikePython(`${'['.repeat(MAX_JSON_DEPTH)}1,]`)).toEqual({
      kind: 'invalid',
      message: 'Expecting value',
      position: MAX_JSON_DEPTH + 2,
    });
  });
});

describe('parseJsonLikePython: properties', () => {
  it('equals JSON.parse whenever JSON.parse succeeds', () => {
    fc.assert(
      fc.property(fc.oneof(fc.json(), fc.string(), fc.string({ unit: fc.constantFrom(...'[]{}":,01 '.split('')) })), (text) => {
        let expected: unknown;
        try {
          expected = JSON.parse(text);
        } catch {
          return;
        }
        expect(parseJsonLikePython(text)).toEqual({ kind: 'value', value: expected });
      }),
      { numRuns: 3000 },
    );
  });

  it('parses valid JSON in the slow path to the value JSON.parse gives', () => {
    // A NaN member makes JSON.parse throw, so the whole text goes through the scanner.
    fc.assert(
      fc.property(fc.json(), (text) => {
        const result = parseJsonLikePython(`[NaN, ${text}]`);
        expect(result).toEqual({ kind: 'value', value: [Number.NaN, JSON.parse(text)] });
      }),
      { numRuns: 2000 },
    );
  });

  it('answers like python3 for random JSON-ish text', () => {
    const seed = Date.now();
    const texts = fc.sample(jsonishText(), { numRuns: 3000, seed });
    const expected = askPython(texts);
    expect(expected).toHaveLength(texts.length);
    texts.forEach((text, i) => {
      const outcome = expected[i]!;
      expect(asOutcome(parseJsonLikePython(text)), `seed ${seed}, text ${JSON.stringify(text)}`).toEqual(
        expectedOutcome(outcome),
      );
    });
  });
});

const JSONISH_UNITS = [...'{}[]":,0123456789aeflnrstuyxIN \\.eE+-\t\n', 'NaN', 'Infinity', 'null', 'true', '\\u', 'é', '😀', '\u2028'];

/** Pieces of string literals, to reach the escape and surrogate-pair branches often. */
const STRING_UNITS = ['\\', 'u', 'd83d', 'ude00', 'dc00', '0', 'F', 'g', 'x', 'n', '/', '"', '\t', '\u001f', '😀', ' ', '", '];

/** Text that is often nearly JSON: free-form fragments, or valid JSON with one edit. */
function jsonishText(): fc.Arbitrary<string> {
  const fragments = fc
    .array(fc.oneof(fc.constantFrom(...JSONISH_UNITS), fc.string({ unit: 'grapheme', maxLength: 2 })), { maxLength: 24 })
    .map((parts) => parts.join(''));
  const mutated = fc
    .tuple(fc.json({ maxDepth: 4 }), fc.nat(), fc.nat({ max: 3 }), fc.constantFrom(...JSONISH_UNITS))
    .map(([text, at, deleted, inserted]) => {
      const cut = at % (text.length + 1);
      return text.slice(0, cut) + inserted + text.slice(cut + deleted);
    });
  const stringLiterals = fc
    .array(fc.constantFrom(...STRING_UNITS), { maxLength: 12 })
    .map((parts) => `{"k": "${parts.join('')}`);
  return fc.oneof(fragments, mutated, stringLiterals, fc.json({ maxDepth: 3 }));
}
