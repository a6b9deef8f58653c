import { describe, expect, it } from 'vitest';
import { postJson, seedAdmin, signIn, useTestApps } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { adminWithTotp, bearer, passwordStep, totpCode, verify } from '../../helpers/mfa.js';

const STEP_UP = 'Bearer error="insufficient_user_authentication", acr_values="aal2"';

describe.each(TEST_DIALECTS)('self-service of an admin with a second factor on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('needs an aal2 token: an aal1 session may neither list, end sessions nor change the password', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret, aal1 } = await adminWithTotp(t, admin);
    const asAal1 = bearer(aal1.access_token);
    const answers = [
      await t.app.inject({ method: 'GET', url: '/admin/auth/sessions', headers: asAal1 }),
      await postJson(t.app, '/admin/auth/sessions/revoke-others', {}, asAal1),
      await postJson(t.app, '/admin/auth/password', { current_password: admin.password, new_password: 'a fresh and long passphrase' }, asAal1),
    ];
    for (const answer of answers) {
      expect(answer.statusCode, answer.body).toBe(401);
      expect(answer.headers['www-authenticate']).toBe(STEP_UP);
    }
    const stepped = await verify(t, await passwordStep(t, admin), totpCode(t, secret));
    expect(stepped.statusCode, stepped.body).toBe(200);
    const asAal2 = bearer(stepped.json<{ access_token: string }>().access_token);
    const listed = await t.app.inject({ method: 'GET', url: '/admin/auth/sessions', headers: asAal2 });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json<{ sessions: unknown[] }>().sessions).toHaveLength(2);
  });

  it('an admin without a factor manages their sessions with an aal1 token, as before', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const session = await signIn(t.app, admin);
    const listed = await t.app.inject({ method: 'GET', url: '/admin/auth/sessions', headers: bearer(session.access_token) });
    expect(listed.statusCode, listed.body).toBe(200);
  });
});
