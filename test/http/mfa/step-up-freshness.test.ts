import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { postJson, seedAdmin, useTestApps, type TestApp } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { adminWithTotp, bearer, passwordStep, totpCode, verify } from '../../helpers/mfa.js';

const STEP_UP = { detail: 'This operation needs a session signed in with a second factor' };

/** The three ways of managing factors, with one access token. */
function manage(t: TestApp, token: string, factorId: string): Promise<LightMyRequestResponse[]> {
  return Promise.all([
    postJson(t.app, '/admin/auth/mfa/totp', {}, bearer(token)),
    postJson(t.app, '/admin/auth/mfa/recovery-codes', {}, bearer(token)),
    t.app.inject({ method: 'DELETE', url: `/admin/auth/mfa/${factorId}-unknown`, headers: bearer(token) }),
  ]);
}

async function refreshed(t: TestApp, refreshToken: string): Promise<string> {
  const response = await postJson(t.app, '/auth/refresh', { refresh_token: refreshToken });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ access_token: string }>().access_token;
}

describe.each(TEST_DIALECTS)('step-up freshness for managing factors on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('needs a second factor presented within 15 minutes: a refreshed aal2 session older than that gets the step-up challenge', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret, factorId } = await adminWithTotp(t, admin);
    const signedIn = (await verify(t, await passwordStep(t, admin), totpCode(t, secret))).json<{ refresh_token: string }>();

    t.clock.advance(899);
    const fresh = await manage(t, await refreshed(t, signedIn.refresh_token), factorId);
    expect(fresh.map((answer) => answer.statusCode)).toEqual([200, 200, 404]);

    t.clock.advance(2);
    const stale = await manage(t, await refreshed(t, signedIn.refresh_token), factorId);
    for (const answer of stale) {
      expect(answer.statusCode).toBe(401);
      expect(answer.json()).toEqual(STEP_UP);
      expect(answer.headers['www-authenticate']).toBe('Bearer error="insufficient_user_authentication", acr_values="aal2", max_age="900"');
    }

    // Signing in again with the second factor is the step-up.
    t.clock.advance(30);
    const again = (await verify(t, await passwordStep(t, admin), totpCode(t, secret))).json<{ access_token: string }>();
    expect((await manage(t, again.access_token, factorId)).map((answer) => answer.statusCode)).toEqual([200, 200, 404]);
  });

  it('enrolling the first factor needs no recent second factor', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const signedIn = (await postJson(t.app, '/admin/auth/login', { school_id: admin.schoolId, username: admin.username, password: admin.password })).json<{
      refresh_token: string;
    }>();
    t.clock.advance(3000);
    expect((await postJson(t.app, '/admin/auth/mfa/totp', {}, bearer(await refreshed(t, signedIn.refresh_token)))).statusCode).toBe(200);
  });
});
