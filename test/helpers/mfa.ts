import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { Secret, TOTP } from 'otpauth';
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { postJson, signIn } from './app.js';

/** The code an authenticator app shows for `secret` at the test clock's time, `steps` steps away. */
export function totpCode(t: TestApp, secret: string, steps = 0): string {
  const totp = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) });
  return totp.generate({ timestamp: t.clock.now() + steps * 30_000 });
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

export function loginRequest(app: FastifyInstance, admin: { schoolId: string; username: string; password: string }) {
  return postJson(app, '/admin/auth/login', { school_id: admin.schoolId, username: admin.username, password: admin.password });
}

/** Enrolls and confirms a TOTP factor with `token` (access token or mfa_token); returns the secret and the answer. */
export async function enrollTotp(t: TestApp, token: string) {
  const started = await postJson(t.app, '/admin/auth/mfa/totp', {}, bearer(token));
  expect(started.statusCode, started.body).toBe(200);
  const { factor_id, secret } = started.json<{ factor_id: string; secret: string }>();
  const confirmed = await postJson(t.app, '/admin/auth/mfa/totp/confirm', { factor_id, code: totpCode(t, secret) }, bearer(token));
  expect(confirmed.statusCode, confirmed.body).toBe(200);
  return { factorId: factor_id, secret, confirmed: confirmed.json<{ recovery_codes: string[] | null; access_token?: string }>() };
}

/** An admin (signed in once, aal1) who then enrolled TOTP; the clock moves past that code's step. */
export async function adminWithTotp(t: TestApp, admin: { schoolId: string; username: string; password: string }) {
  const first = await signIn(t.app, admin);
  const enrolled = await enrollTotp(t, first.access_token);
  t.clock.advance(30);
  return { ...enrolled, aal1: first };
}

/** Signs in with the password and expects the 403 that asks for the second factor. */
export async function passwordStep(t: TestApp, admin: { schoolId: string; username: string; password: string }): Promise<string> {
  const response = await loginRequest(t.app, admin);
  expect(response.statusCode, response.body).toBe(403);
  return response.json<{ mfa_token: string }>().mfa_token;
}

export function verify(t: TestApp, mfaToken: string, code: string, method = 'totp'): Promise<LightMyRequestResponse> {
  return postJson(t.app, '/admin/auth/mfa/verify', { mfa_token: mfaToken, method, code });
}

/** A 6-digit code that is not the right one now nor one step either way. */
export function wrongCode(t: TestApp, secret: string): string {
  const near = new Set([-1, 0, 1].map((steps) => totpCode(t, secret, steps)));
  for (let n = 0; ; n++) {
    const candidate = String(n).padStart(6, '0');
    if (!near.has(candidate)) return candidate;
  }
}

/** A JSON POST from the socket peer `ip`. */
export function postFrom(t: TestApp, url: string, body: unknown, ip: string): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'POST', url, remoteAddress: ip, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
}

/** The password step from `ip`: the mfa_token of the 403. */
export async function passwordStepFrom(t: TestApp, admin: { schoolId: string; username: string; password: string }, ip: string): Promise<string> {
  const response = await postFrom(t, '/admin/auth/login', { school_id: admin.schoolId, username: admin.username, password: admin.password }, ip);
  expect(response.statusCode, response.body).toBe(403);
  return response.json<{ mfa_token: string }>().mfa_token;
}

/** A TOTP code for `mfaToken`, sent from `ip`. */
export function verifyFrom(t: TestApp, mfaToken: string, code: string, ip: string): Promise<LightMyRequestResponse> {
  return postFrom(t, '/admin/auth/mfa/verify', { mfa_token: mfaToken, method: 'totp', code }, ip);
}
