import { describe, expect, it } from 'vitest';
import { ValidationFailure } from '../../../src/http/body/validation-failure.js';

describe('ValidationFailure', () => {
  it('is an Error to Fastify, which only answers through the error handler what is one', () => {
    const failure = ValidationFailure.jsonInvalid(13, 'Expecting value');
    expect(failure).toBeInstanceOf(Error);
    expect(failure).toBeInstanceOf(ValidationFailure);
    expect(failure.statusCode).toBe(422);
  });

  it('captures no stack: a malformed body is expected input, never logged', () => {
    expect((new ValidationFailure([]) as unknown as Error).stack).toBeUndefined();
  });

  it('carries its body as JSON: `{"detail": items}`', () => {
    const items = [{ type: 'missing', loc: ['body', 'username'], msg: 'Field required', input: { school_id: 's' } }];
    expect(new ValidationFailure(items).body).toBe(JSON.stringify({ detail: items }));
    const decode = ValidationFailure.jsonInvalid(13, 'Expecting value');
    expect(JSON.parse(decode.body)).toEqual({ detail: decode.items });
  });

  it('writes the decode error from its template exactly as JSON.stringify would, for every message', () => {
    // The parser's messages (python-json.ts), with backslashes, quotes and colons to escape.
    const messages = ['Extra data', 'Expecting value', 'Unterminated string starting at', 'Invalid control character at',
      'Invalid \\escape', 'Invalid \\uXXXX escape', 'Expecting property name enclosed in double quotes',
      "Expecting ':' delimiter", "Expecting ',' delimiter", 'a "quoted" \u0000 \u2028 message'];
    for (const message of messages) {
      for (const position of [0, 1, 13, 65_535]) {
        const decode = ValidationFailure.jsonInvalid(position, message);
        expect(decode.body).toBe(JSON.stringify({ detail: decode.items }));
        expect(decode.items[0]).toMatchObject({ type: 'json_invalid', loc: ['body', position], ctx: { error: message } });
      }
    }
  });
});
