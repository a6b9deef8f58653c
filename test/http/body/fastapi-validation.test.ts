import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  RawBody,
  jsonInvalidItem,
  validateBody,
  type FieldSpec,
  type ValidationItem,
} from '../../../src/http/body/fastapi-validation.js';
import { isSecretName } from '../../../src/http/body/secret-names.js';

const LOGIN: readonly FieldSpec[] = [
  { name: 'school_id', maxLength: 128 },
  { name: 'username', maxLength: 256 },
  { name: 'password', maxLength: 1024 },
];
const REFRESH: readonly FieldSpec[] = [{ name: 'refresh_token', maxLength: 512 }];

const NOT_A_DICT = 'Input should be a valid dictionary or object to extract fields from';

function notADict(input: unknown): ValidationItem[] {
  return [{ type: 'model_attributes_type', loc: ['body'], msg: NOT_A_DICT, input }];
}

describe('validateBody: the body as a whole', () => {
  it.each([undefined, null])('reports a missing body for %s', (body) => {
    expect(validateBody(body, LOGIN)).toEqual([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]);
  });

  it.each<[string, unknown]>([
    ['an array', [1, 'a']],
    ['a string', 'school'],
    ['an empty string', ''],
    ['a number', 42],
    ['zero', 0],
    ['a boolean', false],
  ])('refuses %s, echoing it', (_name, body) => {
    expect(validateBody(body, LOGIN)).toEqual(notADict(body));
  });

  it('never echoes a raw body', () => {
    expect(validateBody(new RawBody('school_id=a&password=hunter2'), LOGIN)).toEqual(notADict('[redacted]'));
    expect(validateBody(new RawBody(''), REFRESH)).toEqual(notADict('[redacted]'));
  });

  it('keeps non-finite numbers as they are, for the HTTP layer to write as null', () => {
    expect(validateBody(Number.NaN, LOGIN)).toEqual(notADict(Number.NaN));
    expect(validateBody([Number.POSITIVE_INFINITY], LOGIN)).toEqual(notADict([Number.POSITIVE_INFINITY]));
  });

  it('redacts secrets inside an echoed array, at any depth, without touching the original', () => {
    const body = [{ password: 'hunter2', keep: [{ refresh_token: 'rt', other: 'x' }] }, 'password'];
    const snapshot = structuredClone(body);
    const [item] = validateBody(body, LOGIN);
    expect(item?.input).toEqual([{ password: '[redacted]', keep: [{ refresh_token: '[redacted]', other: 'x' }] }, 'password']);
    expect(body).toEqual(snapshot);
  });
});

describe('validateBody: fields', () => {
  it('accepts a valid body, ignoring unknown fields and allowing empty strings', () => {
    expect(validateBody({ school_id: '', username: 'u', password: 'p', extra: { password: 1 } }, LOGIN)).toEqual([]);
    expect(validateBody({ refresh_token: 'rt' }, REFRESH)).toEqual([]);
  });

  it('reports every missing field in declaration order, echoing the whole body redacted', () => {
    const body = { password: 'hunter2', note: 'n' };
    expect(validateBody(body, LOGIN)).toEqual([
      { type: 'missing', loc: ['body', 'school_id'], msg: 'Field required', input: { password: '[redacted]', note: 'n' } },
      { type: 'missing', loc: ['body', 'username'], msg: 'Field required', input: { password: '[redacted]', note: 'n' } },
    ]);
    expect(body.password).toBe('hunter2');
  });

  it('reports every problem, in field order, whatever the key order of the body', () => {
    const body = { password: 7, username: 'x'.repeat(257), extra: true };
    expect(validateBody(body, LOGIN)).toEqual([
      {
        type: 'missing',
        loc: ['body', 'school_id'],
        msg: 'Field required',
        input: { password: '[redacted]', username: 'x'.repeat(257), extra: true },
      },
      {
        type: 'string_too_long',
        loc: ['body', 'username'],
        msg: 'String should have at most 256 characters',
        input: 'x'.repeat(257),
        ctx: { max_length: 256 },
      },
      { type: 'string_type', loc: ['body', 'password'], msg: 'Input should be a valid string', input: '[redacted]' },
    ]);
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['a number', 12],
    ['a non-finite number', Number.NaN],
    ['a boolean', true],
    ['an array', ['a']],
    ['an object', { a: 1 }],
  ])('refuses %s where a string is expected, echoing it', (_name, value) => {
    expect(validateBody({ school_id: value, username: 'u', password: 'p' }, LOGIN)).toEqual([
      { type: 'string_type', loc: ['body', 'school_id'], msg: 'Input should be a valid string', input: value },
    ]);
  });

  it('never echoes a secret field, whatever its value', () => {
    for (const value of [null, 1, 'x'.repeat(1025), { a: 1 }]) {
      const [item] = validateBody({ school_id: 's', username: 'u', password: value }, LOGIN);
      expect(item?.input).toBe('[redacted]');
    }
    expect(validateBody({ refresh_token: 'r'.repeat(513) }, REFRESH)).toEqual([
      {
        type: 'string_too_long',
        loc: ['body', 'refresh_token'],
        msg: 'String should have at most 512 characters',
        input: '[redacted]',
        ctx: { max_length: 512 },
      },
    ]);
  });

  it('redacts secrets nested in an echoed field value or body', () => {
    const value = { password: 'p', inner: [{ refresh_token: 'r', password: { deep: 'd' } }], passwords: 'p', passage: 'kept' };
    const expected = { password: '[redacted]', inner: [{ refresh_token: '[redacted]', password: '[redacted]' }], passwords: '[redacted]', passage: 'kept' };
    expect(validateBody({ username: value, password: 'p', school_id: 's' }, LOGIN)).toEqual([
      { type: 'string_type', loc: ['body', 'username'], msg: 'Input should be a valid string', input: expected },
    ]);
    const [missing] = validateBody({ nested: value }, REFRESH);
    expect(missing?.input).toEqual({ nested: expected });
    expect(value.password).toBe('p');
  });

  it('counts length in code points, as Python does', () => {
    const fields: FieldSpec[] = [{ name: 'username', maxLength: 3 }];
    expect(validateBody({ username: '😀😀😀' }, fields)).toEqual([]);
    expect(validateBody({ username: 'é\u0301x' }, fields)).toEqual([]);
    expect(validateBody({ username: '\ud800\ud800\ud800' }, fields)).toEqual([]);
    expect(validateBody({ username: '😀😀😀😀' }, fields)).toEqual([
      {
        type: 'string_too_long',
        loc: ['body', 'username'],
        msg: 'String should have at most 3 characters',
        input: '😀😀😀😀',
        ctx: { max_length: 3 },
      },
    ]);
  });

  it('writes "character" for a limit of one, as Pydantic does', () => {
    const [item] = validateBody({ code: 'ab' }, [{ name: 'code', maxLength: 1 }]);
    expect(item?.msg).toBe('String should have at most 1 character');
  });

  it('accepts a string of exactly the limit', () => {
    expect(validateBody({ school_id: 's'.repeat(128), username: 'u'.repeat(256), password: 'p'.repeat(1024) }, LOGIN)).toEqual(
      [],
    );
  });
});

describe('validateBody: keys that could reach Object.prototype', () => {
  it('does not see inherited members as fields', () => {
    const items = validateBody(JSON.parse('{"toString": 1, "constructor": "x"}'), [
      { name: 'toString', maxLength: 10 },
      { name: 'hasOwnProperty', maxLength: 10 },
    ]);
    expect(items.map((item) => [item.type, item.loc])).toEqual([
      ['string_type', ['body', 'toString']],
      ['missing', ['body', 'hasOwnProperty']],
    ]);
    expect(validateBody({}, [{ name: 'constructor', maxLength: 10 }])[0]?.type).toBe('missing');
  });

  it('treats a JSON __proto__ key as an ordinary unknown field, and echoes it as one', () => {
    const body: unknown = JSON.parse('{"__proto__": {"school_id": "s", "password": "p"}, "username": "u"}');
    const items = validateBody(body, LOGIN);
    expect(items.map((item) => item.loc)).toEqual([
      ['body', 'school_id'],
      ['body', 'password'],
    ]);
    const echoed = items[0]?.input as Record<string, unknown>;
    expect(Object.getPrototypeOf(echoed)).toBe(Object.prototype);
    expect(Object.hasOwn(echoed, '__proto__')).toBe(true);
    expect(JSON.stringify(echoed)).toBe('{"__proto__":{"school_id":"s","password":"[redacted]"},"username":"u"}');
  });

  it('can validate a field named __proto__ when the body really has one', () => {
    const fields = [{ name: '__proto__', maxLength: 2 }];
    expect(validateBody(JSON.parse('{"__proto__": "ok"}'), fields)).toEqual([]);
    expect(validateBody(JSON.parse('{"__proto__": 5}'), fields)[0]?.type).toBe('string_type');
    expect(validateBody({}, fields)[0]?.type).toBe('missing');
  });

  it('accepts objects without a prototype', () => {
    const body = Object.assign(Object.create(null) as Record<string, unknown>, { refresh_token: 'rt' });
    expect(validateBody(body, REFRESH)).toEqual([]);
  });
});

describe('jsonInvalidItem', () => {
  it("builds FastAPI's json_invalid item", () => {
    expect(jsonInvalidItem(7, "Expecting ',' delimiter")).toEqual({
      type: 'json_invalid',
      loc: ['body', 7],
      msg: 'JSON decode error',
      input: {},
      ctx: { error: "Expecting ',' delimiter" },
    });
  });
});

describe('secret names', () => {
  it('cover the secrets of the contract: passwords, refresh token, second factor code and token', () => {
    for (const name of ['code', 'current_password', 'mfa_token', 'new_password', 'password', 'refresh_token']) expect(isSecretName(name), name).toBe(true);
  });
});

describe('validateBody: properties', () => {
  const itemShape = (item: ValidationItem): void => {
    expect(typeof item.type).toBe('string');
    expect(typeof item.msg).toBe('string');
    expect(Array.isArray(item.loc)).toBe(true);
    expect(item.loc[0]).toBe('body');
    expect('input' in item).toBe(true);
    const keys = Object.keys(item).sort();
    expect(keys).toEqual(item.ctx === undefined ? ['input', 'loc', 'msg', 'type'] : ['ctx', 'input', 'loc', 'msg', 'type']);
  };

  it('never throws and always returns well-formed items', () => {
    const bodies = fc.oneof(
      fc.jsonValue(),
      fc.anything(),
      fc.dictionary(fc.constantFrom('school_id', 'username', 'password', 'refresh_token', '__proto__', 'toString'), fc.jsonValue()),
    );
    fc.assert(
      fc.property(bodies, (body) => {
        const items = validateBody(body, [...LOGIN, ...REFRESH]);
        items.forEach(itemShape);
      }),
      { numRuns: 3000 },
    );
  });

  it('never echoes the value of a secret key', () => {
    const secret = fc.string({ minLength: 1 }).map((s) => `SECRET:${s}`);
    const tree = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue(),
        fc.array(tie('node')),
        fc.dictionary(fc.string(), tie('node')),
        fc.record({ password: secret, rest: tie('node') }),
        fc.record({ refresh_token: fc.oneof(secret, fc.array(secret)), rest: tie('node') }),
      ),
    })).node;
    fc.assert(
      fc.property(tree, (body) => {
        const items = validateBody(body, LOGIN);
        expect(JSON.stringify(items)).not.toContain('SECRET:');
      }),
      { numRuns: 2000 },
    );
  });
});
