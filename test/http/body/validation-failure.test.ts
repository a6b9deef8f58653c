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
});
