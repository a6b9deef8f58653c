import { describe, expect, it } from 'vitest';
import { responseSerializerCompiler } from '../../src/http/serializer.js';
import { RefreshResponse, ValidationErrorBody } from '../../src/http/routes/schemas.js';

function serializerFor(schema: object, httpStatus: string): (data: unknown) => string {
  return responseSerializerCompiler({ schema, method: 'POST', url: '/auth/refresh', httpStatus });
}

describe('responseSerializerCompiler', () => {
  it('writes a success body from its schema: undeclared fields never leave', () => {
    const serialize = serializerFor(RefreshResponse, '200');
    const body = JSON.parse(serialize({ access_token: 'a.b.c', expires_in: 900, token_type: 'bearer', password_hash: '$argon2id$...' }));
    expect(body).toEqual({ access_token: 'a.b.c', expires_in: 900, token_type: 'bearer' });
  });

  it('writes an error body as it was built, item keys in their order', () => {
    const detail = [
      { type: 'json_invalid', loc: ['body', 13], msg: 'JSON decode error', input: {}, ctx: { error: 'Expecting value' } },
      // keys out of the schema's order: written as built, not reordered
      { msg: 'Field required', type: 'missing', loc: ['body', 'username'], input: { school_id: 's' } },
    ];
    for (const status of ['422', '4xx', '503']) {
      expect(serializerFor(ValidationErrorBody, status)({ detail })).toBe(JSON.stringify({ detail }));
    }
  });
});
