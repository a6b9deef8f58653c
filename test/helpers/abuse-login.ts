/**
 * Helpers for the abuse tests (test/abuse/*): login attempts from a chosen client IP, and the
 * exact throttling answer (429 with `Retry-After`).
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import type { TestApp } from './app.js';

export const LOGIN = '/admin/auth/login';
export const THROTTLED_BODY = '{"detail":"Too many failed login attempts. Try again later."}';
export const REFUSED_BODY = '{"detail":"Incorrect username or password"}';
export const UNAVAILABLE_BODY = '{"detail":"Service temporarily unavailable"}';

export interface Creds {
  readonly schoolId: string;
  readonly username: string;
  readonly password: string;
}

export interface Attempt {
  readonly status: number;
  /** The Retry-After header, as a number; undefined when absent. */
  readonly retryAfter: number | undefined;
  readonly body: string;
  readonly response: LightMyRequestResponse;
}

/** One login attempt with a JSON body from the given socket peer. */
export async function attempt(
  app: FastifyInstance,
  creds: Creds,
  ip = '203.0.113.7',
  headers: Record<string, string> = {},
): Promise<Attempt> {
  const response = await app.inject({
    method: 'POST',
    url: LOGIN,
    remoteAddress: ip,
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify({ school_id: creds.schoolId, username: creds.username, password: creds.password }),
  });
  const header = response.headers['retry-after'];
  if (header !== undefined && !/^\d+$/.test(String(header))) throw new Error(`Retry-After is not whole seconds: ${String(header)}`);
  return { status: response.statusCode, retryAfter: header === undefined ? undefined : Number(header), body: response.body, response };
}

/** The parts of an answer the throttling tests compare. */
export function outcome(result: Attempt): { status: number; retryAfter: number | undefined; body: string } {
  return { status: result.status, retryAfter: result.retryAfter, body: result.body };
}

export const throttled = (retryAfter: number) => ({ status: 429, retryAfter, body: THROTTLED_BODY });
export const refused = { status: 401, retryAfter: undefined, body: REFUSED_BODY };

/** A distinct IPv4 address for each n (n < 65536). */
export function ipFor(n: number, prefix = '10.77'): string {
  return `${prefix}.${Math.floor(n / 256) % 256}.${n % 256}`;
}

/** A wrong password for the given admin. */
export function wrong(creds: Creds, suffix = 'nope'): Creds {
  return { ...creds, password: `${creds.password}-${suffix}` };
}

/** Rows of a table, for checks on what the service stored. */
export async function countRows(t: TestApp, table: 'throttle_counters' | 'known_client_ips' | 'refresh_tokens' | 'sessions'): Promise<number> {
  const result = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}`.execute(t.services.db);
  return Number(result.rows[0]?.n ?? 0);
}
