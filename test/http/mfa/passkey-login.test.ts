import { decodeJwt } from 'jose';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Dialect } from '../../../src/db/database.js';
import { seedAdmin, signIn, useTestApps, type TestApp } from '../../helpers/app.js';
import { sealAll, verdict } from '../../helpers/audit.js';
import { me, refresh } from '../../helpers/contract.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { adminWithTotp, bearer, passwordStep, totpCode, verify } from '../../helpers/mfa.js';
import { SoftAuthenticator } from '../../helpers/soft-authenticator.js';
import {
  LOGIN_FIELDS, ORIGIN, PASSKEY_ENV, RP_ID, adminWithDiscoverablePasskey, passkeyLogin, passkeyOptions, passkeyOptionsRequest, registerPasskey,
  registrationOptions, signInAlone, userHandleOf,
} from '../../helpers/webauthn-flow.js';

const OPTION_KEYS = ['allowCredentials', 'challenge', 'rpId', 'timeout', 'userVerification'];
const PASSKEYS_OFF = { detail: 'Passkeys are not enabled on this server' };

/** Rows in every table of the test's own database (its schema on PostgreSQL). */
async function rowCounts(t: TestApp, dialect: Dialect): Promise<Record<string, number>> {
  let tables = await t.services.db.introspection.getTables();
  if (dialect === 'postgres') {
    const current = (await sql<{ s: string }>`select current_schema() as s`.execute(t.services.db)).rows[0]?.s;
    tables = tables.filter((table) => table.schema === current);
  }
  const counts: Record<string, number> = {};
  for (const { name } of tables) {
    const row = (await sql<{ n: number | string }>`select count(*) as n from ${sql.table(name)}`.execute(t.services.db)).rows[0];
    counts[name] = Number(row?.n ?? 0);
  }
  return counts;
}

async function loginSuccesses(t: TestApp, adminId: string): Promise<number> {
  return (await t.services.db.selectFrom('events').select('id').where('type', '=', 'login.success').where('admin_id', '=', adminId).execute()).length;
}

const adminIdOf = (authenticator: SoftAuthenticator) => Buffer.from(authenticator.userHandle!, 'base64url').toString('utf8');

/** The admin's factors as GET /admin/auth/mfa lists them (type, name, discoverable), by type and name. */
async function factorList(t: TestApp, accessToken: string) {
  const listed = await t.app.inject({ method: 'GET', url: '/admin/auth/mfa', headers: bearer(accessToken) });
  expect(listed.statusCode, listed.body).toBe(200);
  return listed
    .json<{ factors: Array<{ type: string; name: string; discoverable: boolean | null }> }>()
    .factors.map(({ type, name, discoverable }) => ({ type, name, discoverable }))
    .sort((a, b) => `${a.type} ${a.name}`.localeCompare(`${b.type} ${b.name}`));
}

describe.each(TEST_DIALECTS)('passkey-alone sign-in on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('options for no body, {} or a school_id: any discoverable credential, user verification required, and nothing stored', async () => {
    const t = await open(PASSKEY_ENV);
    await seedAdmin(t.services);
    const before = await rowCounts(t, dialect);
    expect(Object.keys(before)).toContain('events');
    const answers = [await passkeyOptionsRequest(t), await passkeyOptionsRequest(t, {}), await passkeyOptionsRequest(t, { school_id: 'lincoln-high' })];
    for (const answer of answers) {
      expect(answer.statusCode, answer.body).toBe(200);
      const options = answer.json<Record<string, unknown>>();
      expect(Object.keys(options).sort()).toEqual(OPTION_KEYS);
      expect(options).toEqual({
        challenge: expect.stringMatching(/^[A-Za-z0-9_-]{16,}$/), timeout: expect.any(Number), rpId: RP_ID, allowCredentials: [], userVerification: 'required',
      });
    }
    expect(new Set(answers.map((answer) => answer.json<{ challenge: string }>().challenge)).size).toBe(3);
    expect(await rowCounts(t, dialect)).toEqual(before);
  });

  it('options for an unknown school look exactly like those for a known one', async () => {
    const t = await open(PASSKEY_ENV);
    await seedAdmin(t.services);
    // Two ids of one length, so that nothing but the school's existence could tell them apart.
    const known = await passkeyOptionsRequest(t, { school_id: 'lincoln-high' });
    const unknown = await passkeyOptionsRequest(t, { school_id: 'lincoln-hig2' });
    expect(unknown.statusCode).toBe(known.statusCode);
    expect(Object.keys(unknown.headers).sort()).toEqual(Object.keys(known.headers).sort());
    for (const header of ['content-type', 'content-length', 'cache-control']) expect(unknown.headers[header], header).toBe(known.headers[header]);
    const shape = (options: Record<string, unknown>) => ({ ...options, challenge: String(options.challenge).length });
    expect(shape(unknown.json())).toEqual(shape(known.json()));
  });

  it('passkeys off (no WEBAUTHN_RP_ID): options and login answer 404', async () => {
    const t = await open();
    await seedAdmin(t.services);
    const credential = new SoftAuthenticator({ origin: ORIGIN });
    credential.register({ rp: { id: RP_ID, name: 'x' }, user: { id: 'dXNlcg', name: 'x', displayName: 'x' }, challenge: 'Y2hhbGxlbmdl', pubKeyCredParams: [] });
    const answers = {
      'options without a body': await passkeyOptionsRequest(t),
      'options with {}': await passkeyOptionsRequest(t, {}),
      'options with a school': await passkeyOptionsRequest(t, { school_id: 'lincoln-high' }),
      login: await passkeyLogin(t, credential.authenticate({ challenge: 'Y2hhbGxlbmdl', rpId: RP_ID })),
    };
    for (const [endpoint, answer] of Object.entries(answers)) {
      expect({ endpoint, status: answer.statusCode, body: answer.json<unknown>() }).toEqual({ endpoint, status: 404, body: PASSKEYS_OFF });
    }
  });

  it('a device-bound passkey signs in alone: exactly the login 200 body, aal2 with hwk, login.success; refresh and /me work', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithDiscoverablePasskey(t, admin);
    const adminId = adminIdOf(authenticator);
    expect(authenticator.userHandle).toBe(await userHandleOf(t, admin));
    const successesBefore = await loginSuccesses(t, adminId);
    const sessionsBefore = (await t.services.db.selectFrom('sessions').select('id').execute()).length;

    const signedIn = await signInAlone(t, authenticator);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    expect(Object.keys(signedIn.json()).sort()).toEqual(LOGIN_FIELDS);
    expect(signedIn.json()).toMatchObject({ school_id: admin.schoolId, username: admin.username, token_type: 'bearer', expires_in: 900 });
    expect(signedIn.headers['cache-control']).toBe('no-store');
    const body = signedIn.json<{ access_token: string; refresh_token: string }>();
    expect(decodeJwt(body.access_token)).toMatchObject({ sub: adminId, acr: 'aal2', amr: ['hwk', 'user', 'mfa'] });

    expect(await loginSuccesses(t, adminId)).toBe(successesBefore + 1);
    expect((await t.services.db.selectFrom('sessions').select('id').execute()).length).toBe(sessionsBefore + 1);
    const stored = await t.services.db.selectFrom('mfa_factors').select(['sign_count', 'last_used_at']).executeTakeFirstOrThrow();
    expect(stored.sign_count).toBe(1);
    expect(stored.last_used_at).not.toBeNull();

    const refreshed = await refresh(t.app, body.refresh_token);
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    expect(decodeJwt(refreshed.json<{ access_token: string }>().access_token).sub).toBe(adminId);
    const whoami = await me(t.app, body.access_token);
    expect(whoami.statusCode, whoami.body).toBe(200);
    expect(whoami.json()).toMatchObject({ username: admin.username, school_id: admin.schoolId });
  });

  it('a synced passkey signs in alone with swk', async () => {
    const t = await open(PASSKEY_ENV);
    const { authenticator } = await adminWithDiscoverablePasskey(t, await seedAdmin(t.services), { synced: true });
    const signedIn = await signInAlone(t, authenticator);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    expect(decodeJwt(signedIn.json<{ access_token: string }>().access_token)).toMatchObject({ acr: 'aal2', amr: ['swk', 'user', 'mfa'] });
  });

  it('options asked for with the admin\'s own school_id sign in; so do options without a body', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithDiscoverablePasskey(t, admin);
    const withSchool = await signInAlone(t, authenticator, {}, undefined, admin.schoolId);
    expect(withSchool.statusCode, withSchool.body).toBe(200);
    const withoutBody = await passkeyOptionsRequest(t);
    const signedIn = await passkeyLogin(t, authenticator.authenticate(withoutBody.json()));
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    expect(authenticator.counter).toBe(2);
  });

  it('each admin is told apart by the user handle: two admins of two schools sign in alone as themselves', async () => {
    const t = await open(PASSKEY_ENV);
    const alice = await seedAdmin(t.services);
    const bob = await seedAdmin(t.services, { schoolId: 'roosevelt-elementary', username: 'bob' });
    const { authenticator: alices } = await adminWithDiscoverablePasskey(t, alice);
    const { authenticator: bobs } = await adminWithDiscoverablePasskey(t, bob, { synced: true });
    for (const [authenticator, admin] of [[bobs, bob], [alices, alice]] as const) {
      const signedIn = await signInAlone(t, authenticator);
      expect(signedIn.statusCode, signedIn.body).toBe(200);
      expect(signedIn.json()).toMatchObject({ school_id: admin.schoolId, username: admin.username });
      expect(decodeJwt(signedIn.json<{ access_token: string }>().access_token).sub).toBe(adminIdOf(authenticator));
    }
  });

  it('registration options ask for credProps and prefer a discoverable credential in a school that allows passkeys', async () => {
    const t = await open(PASSKEY_ENV);
    const { access_token } = await signIn(t.app, await seedAdmin(t.services));
    const options = await registrationOptions(t, access_token);
    expect(options.authenticatorSelection).toMatchObject({ residentKey: 'preferred', userVerification: 'required' });
    expect(options.extensions).toMatchObject({ credProps: true });
  });

  it('GET /admin/auth/mfa tells discoverable passkeys: true, false, null when the browser did not say (and for TOTP)', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { secret } = await adminWithTotp(t, admin);
    const aal2 = (await verify(t, await passwordStep(t, admin), totpCode(t, secret))).json<{ access_token: string }>().access_token;
    const unsaid = new SoftAuthenticator({ origin: ORIGIN });
    await registerPasskey(t, aal2, new SoftAuthenticator({ origin: ORIGIN, credProps: true }), 'Resident');
    await registerPasskey(t, aal2, new SoftAuthenticator({ origin: ORIGIN, credProps: false }), 'Server-side');
    await registerPasskey(t, aal2, unsaid, 'Unsaid');
    expect(await factorList(t, aal2)).toEqual([
      { type: 'totp', name: 'Authenticator app', discoverable: null },
      { type: 'webauthn', name: 'Resident', discoverable: true },
      { type: 'webauthn', name: 'Server-side', discoverable: false },
      { type: 'webauthn', name: 'Unsaid', discoverable: null },
    ]);
    const stored = await t.services.db.selectFrom('mfa_factors').select(['name', 'discoverable']).where('type', '=', 'webauthn').orderBy('name').execute();
    expect(stored.map(({ name, discoverable }) => [name, discoverable === null ? null : Number(discoverable)])).toEqual([['Resident', 1], ['Server-side', 0], ['Unsaid', null]]);

    // Signing in alone proves what the browser did not say.
    const signedIn = await signInAlone(t, unsaid);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    const listed = await factorList(t, signedIn.json<{ access_token: string }>().access_token);
    expect(listed.find((factor) => factor.name === 'Unsaid')).toEqual({ type: 'webauthn', name: 'Unsaid', discoverable: true });
    expect(listed.find((factor) => factor.name === 'Server-side')?.discoverable).toBe(false);
  });

  it('a first passkey registered without credProps signs in alone, then lists as discoverable', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator, aal1 } = await adminWithDiscoverablePasskey(t, admin, { rk: undefined });
    const before = await t.app.inject({ method: 'GET', url: '/admin/auth/mfa', headers: bearer(aal1.access_token) });
    expect(before.json<{ factors: Array<{ discoverable: unknown }> }>().factors.map((factor) => factor.discoverable)).toEqual([null]);
    const signedIn = await signInAlone(t, authenticator);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    expect(await factorList(t, signedIn.json<{ access_token: string }>().access_token)).toEqual([{ type: 'webauthn', name: 'Passkey', discoverable: true }]);
  });

  it('the audit trail: login.success for the admin, login.failure (passkey …) for a refusal, and the chain verifies', async () => {
    const t = await open(PASSKEY_ENV);
    const admin = await seedAdmin(t.services);
    const { authenticator } = await adminWithDiscoverablePasskey(t, admin);
    const adminId = adminIdOf(authenticator);
    const failuresBefore = await t.services.db.selectFrom('events').select('id').where('type', '=', 'login.failure').execute();
    const successesBefore = await loginSuccesses(t, adminId);

    const refused = await signInAlone(t, authenticator, { userVerified: false });
    expect(refused.statusCode).toBe(401);
    expect((await signInAlone(t, authenticator)).statusCode).toBe(200);

    const failures = await t.services.db.selectFrom('events').select(['detail', 'id']).where('type', '=', 'login.failure').orderBy('id').execute();
    expect(failures).toHaveLength(failuresBefore.length + 1);
    expect(failures.at(-1)?.detail).toMatch(/^passkey/);
    expect(await loginSuccesses(t, adminId)).toBe(successesBefore + 1);
    const success = await t.services.db.selectFrom('events').select(['school_id', 'username']).where('type', '=', 'login.success').where('admin_id', '=', adminId).orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(success).toMatchObject({ school_id: admin.schoolId, username: admin.username });

    expect(await sealAll(t.services)).toBeGreaterThan(0);
    expect(await verdict(t.services.db)).toBe('ok');
  });

  it('options can be asked for many times; each challenge signs in once', async () => {
    const t = await open(PASSKEY_ENV);
    const { authenticator } = await adminWithDiscoverablePasskey(t, await seedAdmin(t.services));
    const first = await passkeyOptions(t);
    const second = await passkeyOptions(t);
    expect(second.challenge).not.toBe(first.challenge);
    // Asked for in one order, used in the other: an earlier challenge is not replaced by a later one.
    expect((await passkeyLogin(t, authenticator.authenticate(second))).statusCode).toBe(200);
    expect((await passkeyLogin(t, authenticator.authenticate(first))).statusCode).toBe(200);
  });
});
