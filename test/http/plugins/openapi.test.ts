import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS, LoginBody, RefreshTokenBody } from '../../../src/http/routes/schemas.js';
import { createTestApp, seedAdmin, signIn, type TestApp } from '../../helpers/app.js';
import { REPO_ROOT } from '../../helpers/cli-run.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the document is arbitrary JSON */
type Json = any;

let t: TestApp;
let doc: Json;

beforeAll(async () => {
  t = await createTestApp();
  const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  doc = response.json();
});

afterAll(async () => {
  await t?.close();
});

/** Follows a local `$ref` (`#/components/...`) if the generator used one. */
function deref(node: Json): Json {
  let current = node;
  for (let hops = 0; current !== null && typeof current === 'object' && typeof current.$ref === 'string' && hops < 10; hops++) {
    const path = (current.$ref as string).replace(/^#\//, '').split('/');
    let target: Json = doc;
    for (const key of path) target = target?.[key.replace(/~1/g, '/').replace(/~0/g, '~')];
    current = target;
  }
  return current;
}

function operation(method: string, path: string): Json {
  const op = doc.paths?.[path]?.[method];
  if (op === undefined) throw new Error(`the document does not describe ${method.toUpperCase()} ${path}`);
  return op;
}

function jsonSchemaOf(container: Json): Json {
  const schema = deref(deref(container)?.content?.['application/json']?.schema);
  if (schema === undefined) throw new Error(`no application/json schema in ${JSON.stringify(container)}`);
  return schema;
}

function requestSchema(method: string, path: string): Json {
  return jsonSchemaOf(operation(method, path).requestBody);
}

function responseSchema(method: string, path: string, status: number): Json {
  return jsonSchemaOf(operation(method, path).responses?.[String(status)]);
}

/** What a JSON round trip of a TypeBox schema looks like (its symbol keys dropped). */
function plain(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema));
}

const ENDPOINTS: ReadonlyArray<[string, string]> = [
  ['post', '/admin/auth/login'],
  ['post', '/auth/refresh'],
  ['post', '/auth/logout'],
  ['get', '/admin/auth/sso/{school_id}/start'],
  ['get', '/admin/auth/sso/callback'],
  ['post', '/admin/auth/sso/token'],
  ['post', '/admin/auth/sso/backchannel-logout'],
  ['get', '/admin/auth/me'],
  ['get', '/admin/auth/sessions'],
  ['delete', '/admin/auth/sessions/{session_id}'],
  ['post', '/admin/auth/sessions/revoke-others'],
  ['post', '/admin/auth/password'],
  ['post', '/admin/auth/password/forgot'],
  ['post', '/admin/auth/password/reset'],
  ['post', '/admin/auth/mfa/verify'],
  ['post', '/admin/auth/mfa/totp'],
  ['post', '/admin/auth/mfa/totp/confirm'],
  ['get', '/admin/auth/mfa'],
  ['delete', '/admin/auth/mfa/{factor_id}'],
  ['post', '/admin/auth/mfa/recovery-codes'],
  ['post', '/admin/auth/mfa/webauthn/registration-options'],
  ['post', '/admin/auth/mfa/webauthn'],
  ['post', '/admin/auth/mfa/webauthn/options'],
  ['post', '/admin/auth/passkey/options'],
  ['post', '/admin/auth/passkey/login'],
  ['get', '/auth/revocations'],
  ['get', '/.well-known/jwks.json'],
  ['get', '/healthz'],
  ['get', '/readyz'],
  ['get', '/scim/v2/Users'],
  ['post', '/scim/v2/Users'],
  ['get', '/scim/v2/Users/{id}'],
  ['put', '/scim/v2/Users/{id}'],
  ['patch', '/scim/v2/Users/{id}'],
  ['delete', '/scim/v2/Users/{id}'],
  ['get', '/scim/v2/ServiceProviderConfig'],
  ['get', '/scim/v2/ResourceTypes'],
  ['get', '/scim/v2/ResourceTypes/{id}'],
  ['get', '/scim/v2/Schemas'],
  ['get', '/scim/v2/Schemas/{id}'],
];

const PACKAGE_VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** Every operation of the public port, by the tag it is shown under in /docs. */
const TAGGED: ReadonlyArray<[string, string, string]> = [
  ['post', '/admin/auth/login', 'sign-in and tokens'],
  ['post', '/auth/refresh', 'sign-in and tokens'],
  ['post', '/auth/logout', 'sign-in and tokens'],
  ['get', '/admin/auth/sso/{school_id}/start', 'sign-in and tokens'],
  ['get', '/admin/auth/sso/callback', 'sign-in and tokens'],
  ['post', '/admin/auth/sso/token', 'sign-in and tokens'],
  ['post', '/admin/auth/sso/backchannel-logout', 'sign-in and tokens'],
  ['get', '/admin/auth/me', 'sessions'],
  ['get', '/admin/auth/sessions', 'sessions'],
  ['delete', '/admin/auth/sessions/{session_id}', 'sessions'],
  ['post', '/admin/auth/sessions/revoke-others', 'sessions'],
  ['post', '/admin/auth/password', 'sessions'],
  ['post', '/admin/auth/password/forgot', 'sessions'],
  ['post', '/admin/auth/password/reset', 'sessions'],
  ['post', '/admin/auth/mfa/verify', 'second factor'],
  ['post', '/admin/auth/mfa/totp', 'second factor'],
  ['post', '/admin/auth/mfa/totp/confirm', 'second factor'],
  ['get', '/admin/auth/mfa', 'second factor'],
  ['delete', '/admin/auth/mfa/{factor_id}', 'second factor'],
  ['post', '/admin/auth/mfa/recovery-codes', 'second factor'],
  ['post', '/admin/auth/mfa/webauthn/registration-options', 'second factor'],
  ['post', '/admin/auth/mfa/webauthn', 'second factor'],
  ['post', '/admin/auth/mfa/webauthn/options', 'second factor'],
  ['post', '/admin/auth/passkey/options', 'sign-in and tokens'],
  ['post', '/admin/auth/passkey/login', 'sign-in and tokens'],
  ['get', '/auth/revocations', 'keys'],
  ['get', '/.well-known/jwks.json', 'keys'],
  ['get', '/healthz', 'operations'],
  ['get', '/readyz', 'operations'],
  ['get', '/scim/v2/Users', 'directory provisioning (SCIM 2.0)'],
  ['post', '/scim/v2/Users', 'directory provisioning (SCIM 2.0)'],
  ['get', '/scim/v2/Users/{id}', 'directory provisioning (SCIM 2.0)'],
  ['put', '/scim/v2/Users/{id}', 'directory provisioning (SCIM 2.0)'],
  ['patch', '/scim/v2/Users/{id}', 'directory provisioning (SCIM 2.0)'],
  ['delete', '/scim/v2/Users/{id}', 'directory provisioning (SCIM 2.0)'],
  ['get', '/scim/v2/ServiceProviderConfig', 'directory provisioning (SCIM 2.0)'],
  ['get', '/scim/v2/ResourceTypes', 'directory provisioning (SCIM 2.0)'],
  ['get', '/scim/v2/ResourceTypes/{id}', 'directory provisioning (SCIM 2.0)'],
  ['get', '/scim/v2/Schemas', 'directory provisioning (SCIM 2.0)'],
  ['get', '/scim/v2/Schemas/{id}', 'directory provisioning (SCIM 2.0)'],
];

describe('GET /openapi.json: ours', () => {
  it("takes info.version from package.json and names school-auth", () => {
    expect(doc.info.version).toBe(PACKAGE_VERSION);
    expect(doc.info.title).toBe('school-auth');
  });

  it('declares the tags, each with a description, in the order /docs shows them', () => {
    expect((doc.tags as Array<{ name: string }>).map((tag) => tag.name)).toEqual(['sign-in and tokens', 'sessions', 'second factor', 'keys', 'operations', 'directory provisioning (SCIM 2.0)']);
    for (const tag of doc.tags) expect(tag.description, tag.name).toEqual(expect.any(String));
  });

  it('puts every operation under exactly one declared tag, none under "default"', () => {
    for (const [method, path, tag] of TAGGED) expect(operation(method, path).tags, `${method} ${path}`).toEqual([tag]);
    const declared = new Set((doc.tags as Array<{ name: string }>).map((tag) => tag.name));
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(op.tags?.length, `${method} ${path}`).toBe(1);
        expect(declared.has(op.tags[0]), `${method} ${path}`).toBe(true);
      }
    }
  });
});

describe('GET /openapi.json', () => {
  it('is an OpenAPI 3.1 document that passes the OpenAPI schema validator', async () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it.each(ENDPOINTS)('describes %s %s with a summary and its responses', (method, path) => {
    const op = operation(method, path);
    expect(typeof op.summary === 'string' && op.summary.length > 0).toBe(true);
    expect(Object.keys(op.responses ?? {}).length).toBeGreaterThan(0);
  });

  it('describes exactly the public endpoints (nothing hidden leaks, nothing is missing)', () => {
    const described = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method} ${path}`),
    );
    expect(described.sort()).toEqual(ENDPOINTS.map(([method, path]) => `${method} ${path}`).sort());
  });

  it('describes the login body: three required strings with their length limits', () => {
    const schema = requestSchema('post', '/admin/auth/login');
    expect(schema.type).toBe('object');
    expect([...schema.required].sort()).toEqual(['password', 'school_id', 'username']);
    for (const field of ['school_id', 'username', 'password'] as const) {
      expect(schema.properties[field].type).toBe('string');
      expect(schema.properties[field].maxLength).toBe(LIMITS[field]);
    }
    expect(operation('post', '/admin/auth/login').requestBody.required).toBe(true);
  });

  it.each(['/auth/refresh', '/auth/logout'])('describes the %s body: a required refresh_token string of at most 512 characters', (path) => {
    const schema = requestSchema('post', path);
    expect(schema.required).toEqual(['refresh_token']);
    expect(schema.properties.refresh_token.type).toBe('string');
    expect(schema.properties.refresh_token.maxLength).toBe(512);
  });

  it('is generated from the route schemas: the request bodies deep-equal the TypeBox schemas of src/http/routes', () => {
    const login = requestSchema('post', '/admin/auth/login');
    const typebox = plain(LoginBody) as Json;
    expect(login.properties).toEqual(typebox.properties);
    expect([...login.required].sort()).toEqual([...typebox.required].sort());
    expect(requestSchema('post', '/auth/refresh').properties).toEqual((plain(RefreshTokenBody) as Json).properties);
  });

  it('describes the success bodies of login and refresh, with expires_in in seconds', () => {
    const login = responseSchema('post', '/admin/auth/login', 200);
    expect(login.required).toEqual(expect.arrayContaining(['access_token', 'expires_in', 'school_id', 'username', 'token_type', 'refresh_token', 'refresh_expires_in']));
    expect(login.properties.access_token.type).toBe('string');
    expect(login.properties.expires_in.type).toBe('integer');
    expect(login.properties.school_id.type).toBe('string');
    expect(login.properties.username.type).toBe('string');
    expect(login.properties.refresh_token.type).toBe('string');
    expect(login.properties.refresh_expires_in.type).toBe('integer');
    expect(login.properties.expires_in.description).toMatch(/\bseconds\b/i);
    expect(login.properties.refresh_expires_in.description).toMatch(/\bseconds\b/i);

    const refresh = responseSchema('post', '/auth/refresh', 200);
    expect(refresh.required).toEqual(expect.arrayContaining(['access_token', 'expires_in']));
    expect(refresh.properties.access_token.type).toBe('string');
    expect(refresh.properties.expires_in.type).toBe('integer');
    expect(refresh.properties.expires_in.description).toMatch(/\bseconds\b/i);
  });

  it('describes the success answers of the other endpoints', () => {
    expect(operation('post', '/auth/logout').responses['204']).toBeDefined();
    const me = responseSchema('get', '/admin/auth/me', 200);
    expect(me.required).toEqual(expect.arrayContaining(['sub', 'school_id', 'username', 'sid']));
    const jwks = responseSchema('get', '/.well-known/jwks.json', 200);
    expect(jwks.properties.keys.type).toBe('array');
    expect(responseSchema('get', '/healthz', 200).properties.status.type).toBe('string');
    expect(responseSchema('get', '/readyz', 200).properties.status.type).toBe('string');
  });

  it('leaves out /metrics, which is served on the management listener, not on this port', () => {
    expect(Object.keys(doc.paths)).not.toContain('/metrics');
  });

  it('describes the 422 validation body: detail is an array of {type, loc, msg, input} items', () => {
    // SCIM answers SCIM's own errors, never a 422.
    for (const [, path] of ENDPOINTS.filter(([method, path]) => method === 'post' && !path.startsWith('/scim/') && !/\/(revoke-others|mfa\/totp|mfa\/recovery-codes|registration-options|backchannel-logout)$/.test(path))) {
      const body = responseSchema('post', path, 422);
      expect(body.required).toContain('detail');
      const detail = deref(body.properties.detail);
      expect(detail.type).toBe('array');
      const item = deref(detail.items);
      expect(item.type).toBe('object');
      expect([...item.required].sort()).toEqual(['input', 'loc', 'msg', 'type']);
      expect(item.properties.type.type).toBe('string');
      expect(item.properties.msg.type).toBe('string');
      expect(item.properties.loc.type).toBe('array');
      expect(item.properties).toHaveProperty('input');
    }
  });

  it.each([
    ['post', '/admin/auth/login', [400, 401, 403, 413, 422, 429, 503]],
    ['post', '/admin/auth/mfa/verify', [400, 401, 403, 413, 422, 429, 503]],
    ['post', '/admin/auth/mfa/totp', [401, 503]],
    ['post', '/admin/auth/mfa/totp/confirm', [400, 401, 403, 404, 413, 422, 429, 503]],
    ['get', '/admin/auth/mfa', [401, 503]],
    ['delete', '/admin/auth/mfa/{factor_id}', [401, 404, 503]],
    ['post', '/admin/auth/mfa/recovery-codes', [401, 409, 503]],
    ['post', '/admin/auth/mfa/webauthn/registration-options', [401, 404, 503]],
    ['post', '/admin/auth/mfa/webauthn', [400, 401, 404, 413, 422, 503]],
    ['post', '/admin/auth/mfa/webauthn/options', [400, 401, 404, 409, 413, 422, 503]],
    ['post', '/admin/auth/passkey/options', [400, 404, 413, 422, 503]],
    ['post', '/admin/auth/passkey/login', [400, 401, 404, 413, 422, 429, 503]],
    ['post', '/auth/refresh', [400, 401, 413, 422, 503]],
    ['post', '/auth/logout', [400, 413, 422, 503]],
    ['get', '/admin/auth/me', [401, 503]],
    ['get', '/admin/auth/sessions', [401, 503]],
    ['delete', '/admin/auth/sessions/{session_id}', [401, 404, 503]],
    ['post', '/admin/auth/sessions/revoke-others', [401, 503]],
    ['post', '/admin/auth/password', [400, 401, 413, 422, 429, 503]],
    ['post', '/admin/auth/password/forgot', [400, 413, 422, 503]],
    ['post', '/admin/auth/password/reset', [400, 401, 413, 422, 429, 503]],
    ['get', '/auth/revocations', [400, 503]],
    ['get', '/admin/auth/sso/{school_id}/start', [400, 404, 503]],
    ['get', '/admin/auth/sso/callback', [400, 429, 503]],
    ['post', '/admin/auth/sso/token', [400, 401, 403, 413, 422, 503]],
    ['post', '/admin/auth/sso/backchannel-logout', [400, 503]],
    ['get', '/readyz', [503]],
  ] as const)('describes every error body of %s %s as JSON with a detail member', (method, path, statuses) => {
    for (const status of statuses) {
      const body = responseSchema(method, path, status);
      expect(body.type, `${status}`).toBe('object');
      expect(body.required, `${status}`).toContain('detail');
      expect(body.properties.detail, `${status}`).toBeDefined();
    }
  });

  it('describes the passkey bodies: the verify body takes code or credential by method; options and registration in the browser JSON form', () => {
    const verifyBody = requestSchema('post', '/admin/auth/mfa/verify');
    expect([...verifyBody.required].sort()).toEqual(['method', 'mfa_token']);
    expect(verifyBody.properties.method.enum).toEqual(['totp', 'webauthn', 'recovery_code']);
    expect(verifyBody.properties.credential.type).toBe('object');
    expect([...verifyBody.properties.credential.required].sort()).toEqual(['id', 'rawId', 'response', 'type']);
    const registration = requestSchema('post', '/admin/auth/mfa/webauthn');
    expect(registration.required).toEqual(['credential']);
    expect(registration.properties.name.maxLength).toBe(64);
    expect(requestSchema('post', '/admin/auth/mfa/webauthn/options').required).toEqual(['mfa_token']);
    const creation = responseSchema('post', '/admin/auth/mfa/webauthn/registration-options', 200);
    expect(creation.properties).toHaveProperty('challenge');
    expect(creation.properties).toHaveProperty('excludeCredentials');
    expect(responseSchema('post', '/admin/auth/mfa/webauthn/options', 200).properties).toHaveProperty('allowCredentials');
    expect(requestSchema('post', '/admin/auth/passkey/login').required).toEqual(['credential']);
    expect(responseSchema('post', '/admin/auth/passkey/options', 200).properties.allowCredentials.maxItems).toBe(0);
    expect(JSON.stringify(responseSchema('post', '/admin/auth/passkey/login', 401).properties.detail)).toContain('Incorrect username or password');
    expect(responseSchema('post', '/admin/auth/mfa/webauthn', 201).properties).toHaveProperty('recovery_codes');
    expect(JSON.stringify(responseSchema('post', '/admin/auth/mfa/webauthn', 404).properties.detail)).toContain('Passkeys are not enabled on this server');
  });

  it('documents the exact detail texts of the login errors', () => {
    const example = (status: number) => JSON.stringify(responseSchema('post', '/admin/auth/login', status).properties.detail);
    expect(example(401)).toContain('Incorrect username or password');
    expect(example(413)).toContain('Request body too large');
    expect(example(429)).toContain('Too many failed login attempts. Try again later.');
    expect(example(503)).toContain('Service temporarily unavailable');
  });

  it.each([
    ['get', '/admin/auth/me'],
    ['get', '/admin/auth/sessions'],
    ['delete', '/admin/auth/sessions/{session_id}'],
    ['post', '/admin/auth/sessions/revoke-others'],
    ['post', '/admin/auth/password'],
    ['post', '/admin/auth/mfa/totp'],
    ['post', '/admin/auth/mfa/totp/confirm'],
    ['get', '/admin/auth/mfa'],
    ['delete', '/admin/auth/mfa/{factor_id}'],
    ['post', '/admin/auth/mfa/recovery-codes'],
  ])('protects %s %s with an HTTP bearer security scheme; login has none', (method, path) => {
    const me = operation(method, path);
    expect(me.security).toBeInstanceOf(Array);
    const names = (me.security as Array<Record<string, unknown>>).flatMap((requirement) => Object.keys(requirement));
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      const scheme = deref(doc.components?.securitySchemes?.[name]);
      expect(scheme).toMatchObject({ type: 'http' });
      expect(String(scheme.scheme).toLowerCase()).toBe('bearer');
    }
    expect(operation('post', '/admin/auth/login').security ?? doc.security).toBeUndefined();
  });

  it('matches what the service really answers: a real login body has exactly the documented members and types', async () => {
    const admin = await seedAdmin(t.services);
    const body = (await signIn(t.app, admin)) as unknown as Record<string, unknown>;
    const schema = responseSchema('post', '/admin/auth/login', 200);
    expect(Object.keys(body).sort()).toEqual(Object.keys(schema.properties).sort());
    for (const [key, value] of Object.entries(body)) {
      const type = schema.properties[key].type;
      expect(type === 'integer' ? Number.isInteger(value) : typeof value === type, key).toBe(true);
    }
  });
});
