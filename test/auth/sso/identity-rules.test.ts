import { describe, expect, it } from 'vitest';
import { setAdminEnabled } from '../../../src/auth/accounts/admins.js';
import { addSchool, suspendSchool } from '../../../src/auth/accounts/schools.js';
import { linkAdmin } from '../../../src/auth/sso/links.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { SCHOOL, idpClient, linkedAdmin, reachCallback, useIdp, idpSuite } from '../../helpers/sso.js';

const TENANT = '7d3f1c2a-0b4e-4f5a-9c8d-1e2f3a4b5c6d';
const USERS = {
  staff: { email: 'alice@district.example', email_verified: true, hd: 'district.example', tid: TENANT, district: 'd-1' },
  outsider: { email: 'eve@elsewhere.example', email_verified: true, hd: 'elsewhere.example', tid: '00000000-0000-4000-8000-000000000000', district: 'd-2' },
  consumer: { email: 'alice@district.example', email_verified: true },
  unverified: { email: 'alice@district.example', email_verified: false },
  newcomer: { email: 'alice@district.example', email_verified: true },
  'no-email': { hd: 'district.example' },
};

// Where the IdP puts the e-mail claims: in the ID token, or (OpenID Connect Core §5.4, as
// oidc-provider does by default) only in its UserInfo answer.
const CASES = TEST_DIALECTS.flatMap((dialect) => [
  [dialect, 'ID token'],
  [dialect, 'UserInfo'],
] as const);

describe.each(CASES)('who may sign in (%s, e-mail in the %s)', (dialect, source) => {
  const suite = idpSuite({ clients: [idpClient()], users: USERS, userinfoClaims: source === 'UserInfo' });

  async function outcome(login: string): Promise<string> {
    const callback = await reachCallback(suite.world, login);
    return callback.location?.searchParams.has('code') === true ? 'signed in' : (callback.location?.searchParams.get('error') ?? `status ${callback.response.statusCode}`);
  }

  async function lastFailure(): Promise<string | null> {
    const row = await suite.world.services.db.selectFrom('events').select('detail').where('type', '=', 'sso.failure').orderBy('id', 'desc').executeTakeFirst();
    return row?.detail ?? null;
  }

  it.each([
    ['google', { provider: 'google', domains: 'district.example' }, 'domain'],
    ['microsoft', { provider: 'microsoft', tenant: TENANT }, 'tenant'],
    ['clever', { provider: 'clever', district: 'd-1' }, 'district'],
    ['oidc with --domains', { provider: 'oidc', domains: 'district.example' }, 'domain'],
  ] as const)('%s: the allowlist claim decides', async (_name, options, reason) => {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp, options);
    await linkedAdmin(suite.world, { subject: 'staff' });
    await linkedAdmin(suite.world, { subject: 'outsider' }, 'eve');
    expect(await outcome('staff')).toBe('signed in');
    expect(await outcome('outsider')).toBe('access_denied');
    expect(await lastFailure()).toBe(reason);
  });

  it('google: an account without hd (a consumer account) is refused', async () => {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp, { provider: 'google', domains: 'district.example' });
    await linkedAdmin(suite.world, { subject: 'consumer' });
    expect(await outcome('consumer')).toBe('access_denied');
    expect(await lastFailure()).toBe('domain');
  });

  it('an email link binds only with email_verified true', async () => {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp);
    await linkedAdmin(suite.world, { email: 'alice@district.example' });
    expect(await outcome('unverified')).toBe('access_denied');
    expect(await lastFailure()).toBe('email_unverified');
    const link = await suite.world.services.db.selectFrom('sso_links').selectAll().executeTakeFirstOrThrow();
    expect(link.subject).toBeNull();
  });

  it('an identity without an e-mail address is refused as email_missing when a link waits for one', async () => {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp);
    await linkedAdmin(suite.world, { email: 'alice@district.example' });
    expect(await outcome('no-email')).toBe('access_denied');
    expect(await lastFailure()).toBe('email_missing');
  });

  it('once bound, only (iss, sub) matches: a reassigned email takes nothing over', async () => {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp);
    await linkedAdmin(suite.world, { email: 'alice@district.example' });
    expect(await outcome('staff')).toBe('signed in');
    expect(await outcome('newcomer')).toBe('access_denied');
    expect(await lastFailure()).toBe('not_linked');
  });

  it('an unlinked identity is refused', async () => {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp);
    expect(await outcome('staff')).toBe('access_denied');
    expect(await lastFailure()).toBe('not_linked');
  });

  it('one identity, one admin: linking it to a second admin is refused', async () => {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp);
    await linkedAdmin(suite.world, { subject: 'staff' });
    await expect(linkedAdmin(suite.world, { subject: 'staff' }, 'bob')).rejects.toThrow(/already linked to another administrator/);
  });

  it("another school's admin does not sign in here", async () => {
    await suite.open(dialect);
    await addSchool(suite.world.services, 'other-school', undefined);
    await useIdp(suite.world, suite.idp);
    await useIdp(suite.world, suite.idp, {}, 'other-school');
    await linkedAdmin(suite.world, { subject: 'staff' }, 'alice', 'other-school');
    expect(await outcome('staff')).toBe('access_denied');
    expect(await lastFailure()).toBe('not_linked');
  });

  it('a disabled admin and a suspended school are refused', async () => {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp);
    await linkedAdmin(suite.world, { subject: 'staff' });
    await setAdminEnabled(suite.world.services, { schoolId: SCHOOL, username: 'alice' }, false);
    expect(await outcome('staff')).toBe('access_denied');
    expect(await lastFailure()).toBe('disabled');
    await setAdminEnabled(suite.world.services, { schoolId: SCHOOL, username: 'alice' }, true);
    await suspendSchool(suite.world.services, SCHOOL);
    expect(await outcome('staff')).toBe('access_denied');
    expect(await lastFailure()).toBe('school_suspended');
  });

  it('an email link is refused for a school without SSO', async () => {
    await suite.open(dialect);
    await expect(linkedAdmin(suite.world, { email: 'alice@district.example' })).rejects.toThrow(/has no single sign-on/);
    await expect(linkAdmin(suite.world.services, { schoolId: SCHOOL, username: 'alice' }, { subject: 'x' })).rejects.toThrow(/has no single sign-on/);
  });
});

describe.each(TEST_DIALECTS)('claims read from UserInfo (%s)', (dialect) => {
  const suite = idpSuite({ clients: [idpClient()], users: USERS, userinfoClaims: true });

  async function callbackError(login: string, mode: 'userinfo-other-sub' | 'huge-userinfo'): Promise<string | null | undefined> {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp);
    await linkedAdmin(suite.world, { email: 'alice@district.example' });
    const callback = await reachCallback(suite.world, login, { beforeCallback: () => suite.idp.setMode({ mode }) });
    return callback.location?.searchParams.get('error');
  }

  it("are refused when UserInfo's sub is not the ID token's (OpenID Connect Core §5.3.2)", async () => {
    expect(await callbackError('staff', 'userinfo-other-sub')).toBe('access_denied');
    const failure = await suite.world.services.db.selectFrom('events').select('detail').where('type', '=', 'sso.failure').executeTakeFirstOrThrow();
    expect(failure.detail).toMatch(/^id_token_rejected/);
    expect(await suite.world.services.db.selectFrom('sso_links').select('subject').executeTakeFirstOrThrow()).toEqual({ subject: null });
  });

  it('are read up to a limit: a huge answer is temporarily_unavailable', async () => {
    expect(await callbackError('staff', 'huge-userinfo')).toBe('temporarily_unavailable');
  });
});
