import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { addSchool } from '../../src/auth/accounts/schools.js';
import type { AppContext } from '../../src/auth/context.js';
import { createScimToken } from '../../src/auth/scim/scim-tokens.js';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** A school (created if needed) and a SCIM token for it. */
export async function scimSchool(services: AppContext, schoolId = 'lincoln-high'): Promise<{ schoolId: string; token: string; tokenId: string }> {
  await addSchool(services, schoolId, undefined).catch(() => undefined);
  const { id, token } = await createScimToken(services, schoolId, undefined);
  return { schoolId, token, tokenId: id };
}

/** A SCIM client of one token: each call is one request, as a directory sends it. */
export function scimClient(app: FastifyInstance, token: string) {
  const send = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: unknown): Promise<LightMyRequestResponse> =>
    app.inject({
      method,
      url: `/scim/v2${url}`,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  return {
    send,
    get: (url: string) => send('GET', url),
    post: (url: string, body: unknown) => send('POST', url, body),
    put: (url: string, body: unknown) => send('PUT', url, body),
    patch: (url: string, operations: readonly unknown[]) => send('PATCH', url, { schemas: [PATCH_SCHEMA], Operations: operations }),
    delete: (url: string) => send('DELETE', url),
  };
}

/** A User as Entra's first POST sends it. */
export function entraUser(userName: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schemas: [USER_SCHEMA, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
    externalId: userName.split('@')[0],
    userName,
    active: true,
    emails: [{ primary: true, type: 'work', value: userName }],
    meta: { resourceType: 'User' },
    name: { formatted: 'Ryan Leenay', familyName: 'Leenay', givenName: 'Ryan' },
    ...extra,
  };
}

export const ENTERPRISE_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

/** A User as the service answers it; the fields tests read. */
export interface ScimUser {
  readonly schemas: string[];
  readonly id: string;
  readonly userName: string;
  readonly externalId?: string;
  readonly active: boolean;
  readonly name?: Record<string, string>;
  readonly emails?: { value: string; type?: string; primary?: boolean }[];
  readonly meta: { resourceType: string; created: string; lastModified: string; location: string };
  readonly [attribute: string]: unknown;
}

export interface ScimList {
  readonly schemas: string[];
  readonly totalResults: number;
  readonly startIndex: number;
  readonly itemsPerPage: number;
  readonly Resources: ScimUser[];
}

/** `/Users?filter=...` with the filter encoded as a client sends it, and any other parameters. */
export function usersWhere(filter: string, more = ''): string {
  return `/Users?filter=${encodeURIComponent(filter)}${more}`;
}

/** The answer's JSON, after checking its status and SCIM's media type. */
export function scimJson<T = ScimUser>(response: LightMyRequestResponse, status: number): T {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/scim\+json\b/);
  return response.json<T>();
}

/** An error answer exactly as RFC 7644 §3.12 shapes it: schemas, status as a string, detail, scimType when given. */
export function expectScimError(response: LightMyRequestResponse, status: number, scimType?: string): void {
  const body = scimJson<Record<string, unknown>>(response, status);
  expect(Object.keys(body).sort()).toEqual(scimType === undefined ? ['detail', 'schemas', 'status'] : ['detail', 'schemas', 'scimType', 'status']);
  expect(body).toMatchObject({ schemas: [ERROR_SCHEMA], status: String(status), ...(scimType === undefined ? {} : { scimType }) });
  expect(typeof body.detail === 'string' && body.detail.length > 0).toBe(true);
}
