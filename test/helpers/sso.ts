import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { addSchool } from '../../src/auth/accounts/schools.js';
import { linkAdmin, type LinkTarget } from '../../src/auth/sso/links.js';
import { setSso, type SsoOptions } from '../../src/auth/sso/settings.js';
import type { Dialect } from '../../src/db/database.js';
import { PASSWORD, createTestApp, postJson, type TestApp } from './app.js';
import { TestClock } from './clock.js';
import { TestIdp, pkcePair, signInAtIdp, type IdpSetup } from './oidc-idp.js';
import { addAdmin } from '../../src/auth/accounts/admins.js';

export const FRONT_END = 'http://localhost:5173/signed-in';
export const PUBLIC_URL = 'http://127.0.0.1:8000';
export const CALLBACK = `${PUBLIC_URL}/admin/auth/sso/callback`;
export const SCHOOL = 'lincoln-high';

/** The IdP client every test school uses. */
export function idpClient(clientId = 'school-auth', extra: Record<string, unknown> = {}) {
  return { client_id: clientId, client_secret: `${clientId}-secret`, redirect_uris: [CALLBACK], backchannel_logout_uri: `${PUBLIC_URL}/admin/auth/sso/backchannel-logout`, backchannel_logout_session_required: true, ...extra };
}

export type SsoApp = TestApp;

/**
 * The real application on a fresh database, with a clock that starts at the real time (the IdP
 * in its own process signs with real time) and only moves when the test says so.
 */
export async function openSsoApp(dialect: Dialect, env: Record<string, string> = {}): Promise<SsoApp> {
  const settings = { PUBLIC_URL, SSO_REDIRECT_URIS: `${FRONT_END},http://localhost:5173/other`, SSO_ALLOW_HTTP_LOOPBACK: 'on', ...env };
  const world = await createTestApp(settings, dialect, new TestClock(Date.now()));
  await addSchool(world.services, SCHOOL, undefined);
  return world;
}

/** One IdP for a describe block and the app of its current test. */
export interface IdpSuite {
  readonly idp: TestIdp;
  readonly world: SsoApp;
  /** Opens the current test's app (closed after the test). */
  open(dialect: Dialect, env?: Record<string, string>): Promise<SsoApp>;
}

/**
 * The lifecycle the SSO suites share: one IdP process per describe block, started before its
 * first test and stopped after its last; a fresh app per test, closed after it, with the IdP put
 * back in its normal mode.
 */
export function idpSuite(setup: IdpSetup): IdpSuite {
  let idp: TestIdp | undefined;
  let world: SsoApp | undefined;
  beforeAll(async () => {
    idp = await TestIdp.start(setup);
  });
  afterAll(() => idp?.close());
  afterEach(async () => {
    await idp?.setMode({ mode: 'normal' });
    await world?.close();
    world = undefined;
  });
  return {
    get idp() {
      if (idp === undefined) throw new Error('the IdP starts before the first test');
      return idp;
    },
    get world() {
      if (world === undefined) throw new Error('open() the app first');
      return world;
    },
    async open(dialect, env) {
      world = await openSsoApp(dialect, env);
      return world;
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

/** Two IdP accounts, each with a verified address. */
export const ALICE_AND_BOB = {
  'alice-sub': { email: 'alice@district.example', email_verified: true },
  'bob-sub': { email: 'bob@district.example', email_verified: true },
};

/** The suite's app for this test, the school on its IdP, alice and bob linked to alice-sub and bob-sub. */
export async function openWithAliceAndBob(suite: IdpSuite, dialect: Dialect): Promise<void> {
  await suite.open(dialect);
  await useIdp(suite.world, suite.idp);
  await linkedAdmin(suite.world, { subject: 'alice-sub' });
  await linkedAdmin(suite.world, { subject: 'bob-sub' }, 'bob');
}

/** The tokens of a whole sign-in through the IdP; fails the test on any answer but 200. */
export async function tokensThroughIdp(world: SsoApp, login: string): Promise<{ access_token: string; refresh_token: string }> {
  const answer = await signInThroughIdp(world, login);
  if (answer.statusCode !== 200) throw new Error(`the sign-in answered ${answer.statusCode}: ${answer.body}`);
  return answer.json<{ access_token: string; refresh_token: string }>();
}
