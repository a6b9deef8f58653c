import { describe, expect, it } from 'vitest';
import { postJson, useTestApps } from '../../helpers/app.js';

// A 422 redacts `password` and `refresh_token` wherever a 422 would echo them. A confused
// client also sends other secrets to the wrong endpoint: every member named like a secret is
// redacted, at any depth, whatever endpoint echoes it.

const openApp = useTestApps('sqlite');
const MARK = 'S3CRET-VALUE';

const secrets = {
  recovery_code: `${MARK}-1`,
  otp: `${MARK}-2`,
  secret: `${MARK}-3`,
  code: `${MARK}-4`,
  current_password: `${MARK}-5`,
  new_password: `${MARK}-6`,
  mfa_token: `${MARK}-7`,
  client_secret: `${MARK}-8`,
  code_verifier: `${MARK}-9`,
  clientSecret: `${MARK}-10`,
  id_token: `${MARK}-11`,
};

describe('422 bodies never echo a member named like a secret', () => {
  it('redacts them at the top level of an echoed body (login without school_id)', async () => {
    const { app } = await openApp();
    const response = await postJson(app, '/admin/auth/login', { username: 'alice', password: 'pw', ...secrets });
    expect(response.statusCode).toBe(422);
    expect(response.body).not.toContain(MARK);
    const input = response.json<{ detail: { input: Record<string, unknown> }[] }>().detail[0]!.input;
    for (const name of Object.keys(secrets)) expect(input[name], name).toBe('[redacted]');
    expect(input.username).toBe('alice');
  });

  it('redacts them at any depth, in objects and in arrays', async () => {
    const { app } = await openApp();
    const nested = { a: [{ b: { ...secrets, keep: 'visible' } }, [{ otp: `${MARK}-deep` }]] };
    const response = await postJson(app, '/auth/refresh', { refresh_token: 1, nested });
    expect(response.statusCode).toBe(422);
    const notObject = await postJson(app, '/auth/refresh', [nested]);
    expect(notObject.statusCode).toBe(422);
    const missing = await postJson(app, '/auth/refresh', { nested });
    expect(missing.statusCode).toBe(422);
    for (const answer of [notObject, missing]) {
      expect(answer.body).not.toContain(MARK);
      expect(answer.body).toContain('visible');
      expect(answer.body).toContain('"otp":"[redacted]"');
    }
  });

  it('redacts the value of a field whose own name is a secret when its type is wrong', async () => {
    const { app } = await openApp();
    const response = await postJson(app, '/admin/auth/mfa/verify', { mfa_token: { otp: MARK }, method: 'totp', code: [MARK] });
    expect(response.statusCode).toBe(422);
    expect(response.body).not.toContain(MARK);
  });
});
