import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStorableText } from '../../../src/db/text.js';
import { createTestApp, seedAdmin, signIn, type TestApp } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { PASSKEY_ENV } from '../../helpers/webauthn-flow.js';

/**
 * Every string every route takes (path and query parameters, body fields at any depth, members of
 * open objects), read from the OpenAPI document so a new route is covered without editing this
 * file, gets NUL and lone surrogates on SQLite and on PostgreSQL: never a 5xx, and the same answer
 * on both databases.
 */

interface JsonSchema {
  type?: string;
  enum?: string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
}
interface Parameter {
  in: 'path' | 'query';
  name: string;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
}
type Where = { in: 'path' | 'query'; name: string } | { in: 'body'; at: string[] };
interface Target {
  method: string;
  path: string;
  operation: Operation;
  where: Where;
}

const FIXED = ['\u0000', 'a\u0000', '\u0000\u0000b', '\ud800', 'x\udfff', '\udc00\ud800', 'a\u0000\ud83d'];
const GENERATED = fc.sample(
  fc.array(fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', 'a', '😀', '%', '/'), { minLength: 1, maxLength: 8 }).map((units) => units.join('')),
  { numRuns: 6, seed: 25 },
).filter((text) => !isStorableText(text));
const BAD_VALUES = [...FIXED, ...GENERATED];

/** A valid-looking value for a schema: the first enum value, 'x' for strings, required members filled. */
function sample(schema: JsonSchema): unknown {
  if (schema.enum !== undefined) return schema.enum[0];
  if (schema.type === 'string') return 'x';
  if (schema.type === 'array') return [];
  if (schema.type !== 'object') return null;
  const required = new Set(schema.required ?? []);
  return Object.fromEntries(Object.entries(schema.properties ?? {}).filter(([name]) => required.has(name)).map(([name, member]) => [name, sample(member)]));
}

/** Every place a string can go in a body: string members at any depth, and a new member of each open object. */
function bodyPlaces(schema: JsonSchema, at: string[] = []): string[][] {
  if (schema.type === 'string') return [at];
  if (schema.type !== 'object') return [];
  const members = Object.entries(schema.properties ?? {}).flatMap(([name, member]) => bodyPlaces(member, [...at, name]));
  return schema.additionalProperties === true ? [...members, [...at, 'extra']] : members;
}

function targetsOf(paths: Record<string, Record<string, Operation>>): Target[] {
  return Object.entries(paths).flatMap(([path, operations]) =>
    Object.entries(operations).flatMap(([method, operation]) => {
      const parameters = (operation.parameters ?? []).map((parameter): Where => ({ in: parameter.in, name: parameter.name }));
      const schema = operation.requestBody?.content['application/json']?.schema;
      const body = schema === undefined ? [] : bodyPlaces(schema).map((at): Where => ({ in: 'body', at }));
      return [...parameters, ...body].map((where) => ({ method: method.toUpperCase(), path, operation, where }));
    }),
  );
}

function withValue(body: unknown, at: string[], value: string): unknown {
  const [head, ...rest] = at;
  if (head === undefined) return value;
  const container = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  return { ...container, [head]: withValue(container[head], rest, value) };
}

/** Percent-encodes each UTF-16 unit's WTF-8 bytes, so a lone surrogate reaches the server as sent. */
function encodeUnits(text: string): string {
  let encoded = '';
  for (const char of text) {
    const unit = char.codePointAt(0) ?? 0;
    const bytes = unit >= 0xd800 && unit <= 0xdfff ? [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)] : [...Buffer.from(char)];
    encoded += bytes.map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  return encoded;
}

function request(t: TestApp, token: string, target: Target, bad: string): Promise<LightMyRequestResponse> {
  const { where, operation } = target;
  let url = target.path;
  for (const parameter of operation.parameters ?? []) {
    const value = where.in === parameter.in && where.name === parameter.name ? encodeUnits(bad) : 'x';
    if (parameter.in === 'path') url = url.replace(`{${parameter.name}}`, value);
    else if (where.in === 'query' && where.name === parameter.name) url += `?${parameter.name}=${value}`;
  }
  const schema = operation.requestBody?.content['application/json']?.schema;
  const payload = schema === undefined ? undefined : JSON.stringify(where.in === 'body' ? withValue(sample(schema), where.at, bad) : sample(schema));
  const headers = { authorization: `Bearer ${token}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) };
  return t.app.inject({ method: target.method as 'GET', url, headers, payload });
}

describe('NUL and lone surrogates in every string of every route', () => {
  const apps: { t: TestApp; token: string }[] = [];
  let targets: Target[] = [];
  beforeAll(async () => {
    for (const dialect of TEST_DIALECTS) {
      const t = await createTestApp({ ...PASSKEY_ENV, LOGIN_THROTTLE: 'off' }, dialect);
      const admin = await seedAdmin(t.services);
      apps.push({ t, token: (await signIn(t.app, admin)).access_token });
    }
    const document = await apps[0]!.t.app.inject({ method: 'GET', url: '/openapi.json' });
    targets = targetsOf(document.json<{ paths: Record<string, Record<string, Operation>> }>().paths);
  });
  afterAll(async () => {
    await Promise.all(apps.map(({ t }) => t.close()));
  });

  it('finds the routes that take strings in the OpenAPI document', () => {
    const described = new Set(targets.map((target) => `${target.method} ${target.path}`));
    for (const route of ['DELETE /admin/auth/sessions/{session_id}', 'DELETE /admin/auth/mfa/{factor_id}', 'POST /admin/auth/mfa/totp/confirm', 'GET /auth/revocations']) {
      expect(described).toContain(route);
    }
    expect(BAD_VALUES.length).toBeGreaterThan(FIXED.length);
  });

  it('never answers 5xx, and SQLite and PostgreSQL answer the same', async () => {
    for (const target of targets) {
      for (const bad of BAD_VALUES) {
        const answers = [];
        for (const { t, token } of apps) answers.push(await request(t, token, target, bad));
        const where = `${target.method} ${target.path} ${JSON.stringify(target.where)} ${JSON.stringify(bad)}`;
        for (const answer of answers) expect(answer.statusCode, `${where} -> ${answer.body}`).toBeLessThan(500);
        const [first, ...others] = answers.map((answer) => ({ status: answer.statusCode, body: answer.body }));
        for (const other of others) expect(other, where).toEqual(first);
      }
    }
  });
});
