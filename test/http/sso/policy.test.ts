import { describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { setMfaPolicy } from '../../../src/auth/mfa/operator.js';
import { PASSWORD, postJson } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { adminWithTotp, loginRequest, totpCode, verify } from '../../helpers/mfa.js';
import { setAdminEnabled } from '../../../src/auth/accounts/admins.js';
import { SCHOOL, idpClient, linkedAdmin, reachCallback, signInThroughIdp, useIdp, idpSuite } from '../../helpers/sso.js';

const USERS = { 'alice-sub': { email: 'alice@district.example', email_verified: true } };
const ALICE = { schoolId: SCHOOL, username: 'alice', password: PASSWORD };

describe.each(TEST_DIALECTS)("the school's policy applies to SSO sign-ins (%s)", (dialect) => {
  const suite = idpSuite({ clients: [idpClient()], users: USERS });

  async function setUp(env: Record<string, string> = {}, options: { trustIdpMfa?: boolean; passwordLogin?: string } = {}) {
    await suite.open(dialect, env);
    await useIdp(suite.world, suite.idp, options);
    await linkedAdmin(suite.world, { subject: 'alice-sub' });
  }

  it('an admin with a factor is asked for it; the session then carries fed and the factor', async () => {
    await setUp();
    const { secret } = await adminWithTotp(suite.world, ALICE);
    const answer = await signInThroughIdp(suite.world, 'alice-sub');
    expect(answer.statusCode).toBe(403);
    expect(answer.json()).toMatchObject({ detail: 'Second factor required', mfa_methods: ['totp', 'recovery_code'] });
    const verified = await verify(suite.world, answer.json<{ mfa_token: string }>().mfa_token, totpCode(suite.world, secret));
    expect(verified.statusCode).toBe(200);
    const claims = decodeJwt(verified.json<{ access_token: string }>().access_token);
    expect(claims).toMatchObject({ acr: 'aal2', amr: ['fed', 'otp', 'mfa'] });
    const session = await suite.world.services.db.selectFrom('sessions').select(['sso_subject']).where('id', '=', String(claims.sid)).executeTakeFirstOrThrow();
    expect(session.sso_subject).toBe('alice-sub');
  });

  it('a required school asks an admin without a factor to enroll', async () => {
    await setUp();
    await setMfaPolicy(suite.world.services, SCHOOL, 'required');
    const answer = await signInThroughIdp(suite.world, 'alice-sub');
    expect(answer.statusCode).toBe(403);
    expect(answer.json()).toMatchObject({ detail: 'Second factor enrollment required', mfa_methods: [] });
  });

  it("--trust-idp-mfa: the IdP's MFA in amr counts as aal2; without the flag, or without MFA in amr, ours is asked", async () => {
    await setUp({}, { trustIdpMfa: true });
    await setMfaPolicy(suite.world.services, SCHOOL, 'required');
    await suite.idp.setMode({ tamper: { claims: { amr: ['pwd', 'mfa'] } } });
    const trusted = await signInThroughIdp(suite.world, 'alice-sub');
    expect(trusted.statusCode).toBe(200);
    expect(decodeJwt(trusted.json<{ access_token: string }>().access_token)).toMatchObject({ acr: 'aal2', amr: ['fed', 'mfa'] });

    await suite.idp.setMode({ tamper: { claims: { amr: ['pwd'] } } });
    expect((await signInThroughIdp(suite.world, 'alice-sub')).statusCode).toBe(403);

    await useIdp(suite.world, suite.idp, { trustIdpMfa: false });
    await suite.idp.setMode({ tamper: { claims: { amr: ['pwd', 'mfa'] } } });
    expect((await signInThroughIdp(suite.world, 'alice-sub')).statusCode).toBe(403);
  });

  it('SSO_SESSION_MAX_AGE ends an SSO session on time, whatever the refresh activity; password sessions keep their lifetime', async () => {
    await setUp({ SSO_SESSION_MAX_AGE: '900', REFRESH_IDLE_TIMEOUT: '600' });
    const answer = await signInThroughIdp(suite.world, 'alice-sub');
    const { refresh_token, refresh_expires_in } = answer.json<{ refresh_token: string; refresh_expires_in: number }>();
    expect(refresh_expires_in).toBe(900);
    suite.world.clock.advance(500);
    expect((await postJson(suite.world.app, '/auth/refresh', { refresh_token })).statusCode).toBe(200);
    suite.world.clock.advance(399);
    expect((await postJson(suite.world.app, '/auth/refresh', { refresh_token })).statusCode).toBe(200);
    suite.world.clock.advance(2);
    expect((await postJson(suite.world.app, '/auth/refresh', { refresh_token })).statusCode).toBe(401);
    const password = await loginRequest(suite.world.app, ALICE);
    expect(password.json<{ refresh_expires_in: number }>().refresh_expires_in).toBe(43_200);
  });

  it('an admin disabled between the callback and the exchange gets no session', async () => {
    await setUp();
    const callback = await reachCallback(suite.world, 'alice-sub');
    await setAdminEnabled(suite.world.services, { schoolId: SCHOOL, username: 'alice' }, false);
    const answer = await postJson(suite.world.app, '/admin/auth/sso/token', { code: callback.location!.searchParams.get('code'), code_verifier: callback.verifier });
    expect(answer.statusCode).toBe(401);
    expect(answer.json()).toEqual({ detail: 'Invalid or expired sign-in code' });
    expect(await suite.world.services.db.selectFrom('sessions').select('id').execute()).toEqual([]);
  });

  it('password login off: 403 for every password login of the school, before any password check', async () => {
    await setUp({}, { passwordLogin: 'off' });
    for (const attempt of [ALICE, { ...ALICE, password: 'wrong' }, { ...ALICE, username: 'nobody' }]) {
      const answer = await loginRequest(suite.world.app, attempt);
      expect(answer.statusCode).toBe(403);
      expect(answer.json()).toEqual({ detail: 'Password sign-in is turned off for this school' });
    }
    // Nothing was checked, so nothing counted as a failed login.
    const failures = await suite.world.services.db.selectFrom('events').select('type').where('type', '=', 'login.failure').execute();
    expect(failures).toEqual([]);
    expect((await loginRequest(suite.world.app, { ...ALICE, schoolId: 'no-such-school' })).statusCode).toBe(401);
    expect((await signInThroughIdp(suite.world, 'alice-sub')).statusCode).toBe(200);
  });
});
