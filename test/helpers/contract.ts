/**
 * Small helpers for the HTTP contract tests (test/http/*.test.ts): the exact error bodies of
 * the contract (docs/api.md), raw requests, and access to what the service recorded.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { importJWK, type JWK } from 'jose';
import { listEvents, type AuditEvent } from '../../src/db/queries/events.js';
import { listSigningKeys } from '../../src/db/queries/signing-keys.js';
import { postJson, type TestApp } from './app.js';

/** The exact bodies the contract prescribes (byte for byte). */
export const BODIES = {
  loginRefused: '{"detail":"Incorrect username or password"}',
  invalidRefreshToken: '{"detail":"Invalid refresh token"}',
  invalidAccessToken: '{"detail":"Could not validate credentials"}',
  unparsable: '{"detail":"There was an error parsing the body"}',
  tooLarge: '{"detail":"Request body too large"}',
  notFound: '{"detail":"Not Found"}',
  methodNotAllowed: '{"detail":"Method Not Allowed"}',
  unavailable: '{"detail":"Service temporarily unavailable"}',
} as const;

export const INVALID_TOKEN_CHALLENGE = 'Bearer error="invalid_token"';

export const ENDPOINTS = { login: '/admin/auth/login', refresh: '/auth/refresh', logout: '/auth/logout', me: '/admin/auth/me' } as const;

/** POSTs `payload` as is; no Content-Type header at all when `contentType` is undefined. */
export function postRaw(
  app: FastifyInstance,
  url: string,
  payload: string | Buffer,
  contentType?: string,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  const all = contentType === undefined ? headers : { 'content-type': contentType, ...headers };
  return app.inject({ method: 'POST', url, payload, headers: all });
}

export function refresh(app: FastifyInstance, refreshToken: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return postJson(app, ENDPOINTS.refresh, { refresh_token: refreshToken }, headers);
}

export function logout(app: FastifyInstance, refreshToken: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return postJson(app, ENDPOINTS.logout, { refresh_token: refreshToken }, headers);
}

/** GET /admin/auth/me with `Authorization: Bearer <token>`. */
export function me(app: FastifyInstance, accessToken: string): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'GET', url: ENDPOINTS.me, headers: { authorization: `Bearer ${accessToken}` } });
}

/** The audit trail, oldest first, optionally only events of one type. */
export async function auditEvents(t: TestApp, type?: string): Promise<AuditEvent[]> {
  const all = (await listEvents(t.services.db, { limit: 10_000 })).reverse();
  return type === undefined ? all : all.filter((event) => event.type === type);
}

/** The signing keys stored in the database, oldest first, with the private key imported (for forging). */
export async function storedSigningKeys(t: TestApp) {
  const rows = await listSigningKeys(t.services.db);
  return Promise.all(
    rows.map(async (row) => ({
      kid: row.kid,
      alg: row.alg,
      activeFrom: row.active_from,
      publicJwk: JSON.parse(row.public_jwk) as JWK,
      privateKey: await importJWK(JSON.parse(row.private_jwk) as JWK, row.alg),
    })),
  );
}

/** Whole seconds of the test clock, the unit of token claims and stored times. */
export function nowSeconds(t: TestApp): number {
  return Math.floor(t.clock.now() / 1000);
}
