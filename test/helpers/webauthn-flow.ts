import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { canonicalKey } from '../../src/auth/identity.js';
import type { TestApp } from './app.js';
import { postJson, signIn } from './app.js';
import { bearer, passwordStep } from './mfa.js';
import { SoftAuthenticator, type CeremonyKnobs } from './soft-authenticator.js';

export const ORIGIN = 'https://admin.school.test';
export const RP_ID = 'school.test';
/** The settings that turn passkeys on in a test app. */
export const PASSKEY_ENV = { WEBAUTHN_RP_ID: RP_ID, WEBAUTHN_ORIGINS: ORIGIN };

/** The fields of the login 200 body, which a passkey sign-in answers exactly. */
export const LOGIN_FIELDS = ['access_token', 'expires_in', 'refresh_expires_in', 'refresh_token', 'school_id', 'token_type', 'username'];

type Admin = { schoolId: string; username: string; password: string };

export function registrationOptionsRequest(t: TestApp, token: string): Promise<LightMyRequestResponse> {
  return postJson(t.app, '/admin/auth/mfa/webauthn/registration-options', {}, bearer(token));
}

export async function registrationOptions(t: TestApp, token: string): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const response = await registrationOptionsRequest(t, token);
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

/** Asks for creation options with `token`, lets the authenticator answer them, and posts the answer. */
export async function attemptRegistration(t: TestApp, token: string, authenticator: SoftAuthenticator, knobs: CeremonyKnobs = {}, name?: string) {
  const credential = authenticator.register(await registrationOptions(t, token), knobs);
  return postJson(t.app, '/admin/auth/mfa/webauthn', name === undefined ? { credential } : { credential, name }, bearer(token));
}

/** Registers a passkey with `token` and expects the 201. */
export async function registerPasskey(t: TestApp, token: string, authenticator: SoftAuthenticator, name?: string) {
  const response = await attemptRegistration(t, token, authenticator, {}, name);
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ factor_id: string; recovery_codes: string[] | null; access_token?: string }>();
}

/** An admin who signed in once (aal1) and registered a passkey as their first factor. */
export async function adminWithPasskey(t: TestApp, admin: Admin, synced = false) {
  const aal1 = await signIn(t.app, admin);
  const authenticator = new SoftAuthenticator({ origin: ORIGIN, synced });
  const registered = await registerPasskey(t, aal1.access_token, authenticator);
  return { authenticator, aal1, factorId: registered.factor_id, recoveryCodes: registered.recovery_codes ?? [] };
}

export function requestOptionsRequest(t: TestApp, mfaToken: string): Promise<LightMyRequestResponse> {
  return postJson(t.app, '/admin/auth/mfa/webauthn/options', { mfa_token: mfaToken });
}

export async function requestOptions(t: TestApp, mfaToken: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const response = await requestOptionsRequest(t, mfaToken);
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

export function verifyPasskey(t: TestApp, mfaToken: string, credential: AuthenticationResponseJSON): Promise<LightMyRequestResponse> {
  return postJson(t.app, '/admin/auth/mfa/verify', { mfa_token: mfaToken, method: 'webauthn', credential });
}

/** Fresh request options for `mfaToken`, answered by the authenticator (with knobs) and verified. */
export async function assertWith(t: TestApp, mfaToken: string, authenticator: SoftAuthenticator, knobs: CeremonyKnobs = {}) {
  return verifyPasskey(t, mfaToken, authenticator.authenticate(await requestOptions(t, mfaToken), knobs));
}

/** Password, then passkey: the whole sign-in, returning the verify answer. */
export async function signInWithPasskey(t: TestApp, admin: Admin, authenticator: SoftAuthenticator, knobs: CeremonyKnobs = {}) {
  return assertWith(t, await passwordStep(t, admin), authenticator, knobs);
}

export const PASSKEY_OPTIONS_URL = '/admin/auth/passkey/options';
export const PASSKEY_LOGIN_URL = '/admin/auth/passkey/login';

/**
 * POST /admin/auth/passkey/options: with `body` as JSON, or with no body (and no Content-Type)
 * when it is undefined; from the socket peer `ip` when given.
 */
export function passkeyOptionsRequest(t: TestApp, body?: Record<string, unknown>, ip?: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: PASSKEY_OPTIONS_URL,
    ...(ip === undefined ? {} : { remoteAddress: ip }),
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) }),
  });
}

/** Request options for signing in with a passkey alone (body `{}` unless given); fails the test on anything but a 200. */
export async function passkeyOptions(t: TestApp, body: Record<string, unknown> = {}): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const response = await passkeyOptionsRequest(t, body);
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

/** POST /admin/auth/passkey/login with `credential`, from the socket peer `ip` when given. */
export function passkeyLogin(t: TestApp, credential: unknown, ip?: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: PASSKEY_LOGIN_URL,
    ...(ip === undefined ? {} : { remoteAddress: ip }),
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ credential }),
  });
}

/** Fresh passkey options (for `school_id` when given), answered by the authenticator (with knobs), posted from `ip`. */
export async function signInAlone(t: TestApp, authenticator: SoftAuthenticator, knobs: CeremonyKnobs = {}, ip?: string, schoolId?: string) {
  const options = await passkeyOptions(t, schoolId === undefined ? {} : { school_id: schoolId });
  return passkeyLogin(t, authenticator.authenticate(options, knobs), ip);
}

/**
 * An admin who signed in once (aal1) and registered, as their first factor, a passkey whose
 * registration reported credProps `rk` (default true: a discoverable passkey; undefined: none said).
 */
export async function adminWithDiscoverablePasskey(t: TestApp, admin: Admin, options: { synced?: boolean; rk?: boolean | undefined } = {}) {
  const aal1 = await signIn(t.app, admin);
  const rk = 'rk' in options ? options.rk : true;
  const authenticator = new SoftAuthenticator({ origin: ORIGIN, synced: options.synced ?? false, ...(rk === undefined ? {} : { credProps: rk }) });
  const registered = await registerPasskey(t, aal1.access_token, authenticator);
  return { authenticator, aal1, factorId: registered.factor_id, recoveryCodes: registered.recovery_codes ?? [] };
}

/** What the sign-in refusal tests compare: the status, the whole body and the challenge header. */
export function refusalOf(response: LightMyRequestResponse) {
  return { status: response.statusCode, body: response.json<unknown>(), wwwAuthenticate: response.headers['www-authenticate'] };
}

/** The one refusal every failed sign-in answers, password or passkey. */
export const LOGIN_REFUSAL = { status: 401, body: { detail: 'Incorrect username or password' }, wwwAuthenticate: 'Bearer' };

/** A wrong password for `admin`, from `ip` when given: the answer every refused passkey sign-in must equal. */
export async function wrongPasswordRefusal(t: TestApp, admin: Admin, ip?: string) {
  const response = await t.app.inject({
    method: 'POST',
    url: '/admin/auth/login',
    ...(ip === undefined ? {} : { remoteAddress: ip }),
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ school_id: admin.schoolId, username: admin.username, password: `${admin.password} but wrong` }),
  });
  return refusalOf(response);
}

/** The user handle the service gives an admin: base64url of the UTF-8 of their id. */
export async function userHandleOf(t: TestApp, admin: Admin): Promise<string> {
  const row = await t.services.db.selectFrom('admins').select('id').where('school_key', '=', canonicalKey(admin.schoolId)).where('username_key', '=', canonicalKey(admin.username)).executeTakeFirstOrThrow();
  return Buffer.from(row.id, 'utf8').toString('base64url');
}

/** `assertion` naming another credential id (in id and rawId), its signature left as it was. */
export function withCredentialId(assertion: AuthenticationResponseJSON, id: string): AuthenticationResponseJSON {
  return { ...assertion, id, rawId: id };
}

/**
 * Someone without the victim's key: assertions naming the victim's credential id and user handle,
 * signed by another key, as an attacker who learned the credential id can send.
 */
export function impostorOf(victim: SoftAuthenticator): (options: PublicKeyCredentialRequestOptionsJSON) => AuthenticationResponseJSON {
  const handle = victim.userHandle;
  if (handle === undefined) throw new Error('impostorOf: the victim has no registered credential');
  const other = new SoftAuthenticator({ origin: victim.origin });
  other.register({ rp: { id: RP_ID, name: 'school-auth' }, user: { id: handle, name: 'x', displayName: 'x' }, challenge: 'Y2hhbGxlbmdl', pubKeyCredParams: [] });
  return (options) => withCredentialId(other.authenticate(options), victim.id);
}
