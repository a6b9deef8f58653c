import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
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
