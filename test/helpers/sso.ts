import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { addSchool } from '../../src/auth/accounts/schools.js';
import type { AppContext } from '../../src/auth/context.js';
import { linkAdmin, type LinkTarget } from '../../src/auth/sso/links.js';
import { setSso, type SsoOptions } from '../../src/auth/sso/settings.js';
import type { Dialect } from '../../src/db/database.js';
import { closeServices, openServices } from '../../src/services.js';
import { PASSWORD, postJson, testConfig } from './app.js';
import { TestClock } from './clock.js';
import { createTestDatabase } from './database.js';
import { pkcePair, signInAtIdp, type TestIdp } from './oidc-idp.js';
import { addAdmin } from '../../src/auth/accounts/admins.js';

export const FRONT_END = 'http://localhost:5173/signed-in';
export const PUBLIC_URL = 'http://127.0.0.1:8000';
export const CALLBACK = `${PUBLIC_URL}/admin/auth/sso/callback`;
export const SCHOOL = 'lincoln-high';

/** The IdP client every test school uses. */
export function idpClient(clientId = 'school-auth', extra: Record<string, unknown> = {}) {
  return { client_id: clientId, client_secret: `${clientId}-secret`, redirect_uris: [CALLBACK], backchannel_logout_uri: `${PUBLIC_URL}/admin/auth/sso/backchannel-logout`, backchannel_logout_session_required: true, ...extra };
}

export interface SsoApp {
  readonly app: FastifyInstance;
  readonly services: AppContext;
  readonly clock: TestClock;
  readonly config: AppContext['config'];
  close(): Promise<void>;
}

/**
 * The real application on a fresh database, with a clock that starts at the real time (the IdP
 * in its own process signs with real time) and only moves when the test says so.
 */
export async function openSsoApp(dialect: Dialect, env: Record<string, string> = {}): Promise<SsoApp> {
  const config = testConfig({ PUBLIC_URL, SSO_REDIRECT_URIS: `${FRONT_END},http://localhost:5173/other`, SSO_ALLOW_HTTP_LOOPBACK: 'on', ...env });
  const clock = new TestClock(Date.now());
  const services = await openServices(config, { clock, database: await createTestDatabase(dialect) });
  const app = await buildApp(services);
  await addSchool(services, SCHOOL, undefined);
  return {
    app,
    services,
    clock,
    config,
    close: async () => {
      await app.close();
      await closeServices(services);
    },
  };
}

/** Sets the school's SSO to the test IdP, as `school-auth sso set` does. */
export async function useIdp(world: SsoApp, idp: TestIdp, options: Partial<SsoOptions> = {}, schoolId = SCHOOL): Promise<void> {
  const clientId = options.clientId ?? 'school-auth';
  await setSso(world.services, schoolId, { provider: 'oidc', issuer: idp.issuer, clientId, clientSecret: `${clientId}-secret`, ...options });
}

/** An admin with a password, linked to the IdP identity `target`. */
export async function linkedAdmin(world: SsoApp, target: LinkTarget, username = 'alice', schoolId = SCHOOL): Promise<void> {
  await addAdmin(world.services, { schoolId, username }, PASSWORD);
  await linkAdmin(world.services, { schoolId, username }, target);
}

export function startUrl(challenge: string, redirectUri = FRONT_END, schoolId = SCHOOL): string {
  return `/admin/auth/sso/${encodeURIComponent(schoolId)}/start?${new URLSearchParams({ redirect_uri: redirectUri, code_challenge: challenge }).toString()}`;
}

export interface Callback {
  /** Where the callback sent the browser. */
  readonly response: LightMyRequestResponse;
  readonly location: URL | undefined;
  readonly verifier: string;
  /** The URL the IdP sent the browser back with. */
  readonly returned: URL;
}

/** start -> the IdP's login form as `login` -> our callback, as a browser would go. */
export async function reachCallback(world: SsoApp, login: string, options: { beforeCallback?: () => void | Promise<void>; schoolId?: string } = {}): Promise<Callback> {
  const { verifier, challenge } = pkcePair();
  const start = await world.app.inject({ method: 'GET', url: startUrl(challenge, FRONT_END, options.schoolId) });
  if (start.statusCode !== 302) throw new Error(`start answered ${start.statusCode}: ${start.body}`);
  const returned = await signInAtIdp(String(start.headers.location), login);
  await options.beforeCallback?.();
  const response = await world.app.inject({ method: 'GET', url: `${returned.pathname}${returned.search}` });
  const location = typeof response.headers.location === 'string' ? new URL(response.headers.location) : undefined;
  return { response, location, verifier, returned };
}

/** The whole sign-in: the callback's code exchanged with the verifier. */
export async function signInThroughIdp(world: SsoApp, login: string): Promise<LightMyRequestResponse> {
  const callback = await reachCallback(world, login);
  const code = callback.location?.searchParams.get('code');
  if (code === null || code === undefined) throw new Error(`callback did not give a code: ${callback.response.statusCode} ${String(callback.response.headers.location)}`);
  return postJson(world.app, '/admin/auth/sso/token', { code, code_verifier: callback.verifier });
}
