/**
 * A SCIM token acts on its own school only: another school's admin cannot be read, found, created
 * over, changed, disabled or deleted with it, and answers exactly as an id that does not exist.
 * A request without a valid token is refused before anything else, in SCIM's error schema.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { revokeScimToken } from '../../../src/auth/scim/scim-tokens.js';
import { seedAdmin, signIn, useTestApps, type TestApp } from '../../helpers/app.js';
import { refresh } from '../../helpers/contract.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { ERROR_SCHEMA, entraUser, scimClient, scimSchool } from '../../helpers/scim.js';

const BOB = 'bob@district.example';

function expectScimError(response: LightMyRequestResponse, status: number): Record<string, unknown> {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toBe('application/scim+json; charset=utf-8');
  const body = response.json<Record<string, unknown>>();
  expect(body).toMatchObject({ schemas: [ERROR_SCHEMA], status: String(status) });
  expect(typeof body.detail).toBe('string');
  return body;
}

describe.each(TEST_DIALECTS)('a SCIM token acts on its own school only (%s)', (dialect) => {
  const open = useTestApps(dialect);

  /**
   * School A (lincoln-high) with its token and one admin of its own; school B (roosevelt-middle)
   * with its token and bob: a password admin B's directory describes (externalId, address), signed in.
   */
  async function twoSchools() {
    const t = await open();
    const a = await scimSchool(t.services, 'lincoln-high');
    const b = await scimSchool(t.services, 'roosevelt-middle');
    const scimA = scimClient(t.app, a.token);
    const scimB = scimClient(t.app, b.token);
    expect((await scimA.post('/Users', entraUser('carol@district.example'))).statusCode).toBe(201);
    const bob = await seedAdmin(t.services, { schoolId: b.schoolId, username: BOB });
    const { id: bobId } = await t.services.db.selectFrom('admins').select('id').where('username', '=', BOB).executeTakeFirstOrThrow();
    expect((await scimB.put(`/Users/${bobId}`, entraUser(BOB))).statusCode).toBe(200);
    const session = await signIn(t.app, bob);
    return { t, a, b, scimA, scimB, bobId, session };
  }

  /** Everything kept about bob that a request could change: his row, his User as B reads it, his addresses and his events. */
  async function bobState(t: TestApp, scimB: ReturnType<typeof scimClient>, bobId: string) {
    const { db } = t.services;
    const row = await db.selectFrom('admins').selectAll().where('id', '=', bobId).executeTakeFirstOrThrow();
    const user = await scimB.get(`/Users/${bobId}`);
    expect(user.statusCode).toBe(200);
    const emails = await db.selectFrom('admin_emails').select(['address', 'source']).where('admin_id', '=', bobId).execute();
    const events = await db.selectFrom('events').select(['type', 'detail']).where('admin_id', '=', bobId).orderBy('id').execute();
    const sessions = await db.selectFrom('sessions').select(['id', 'revoked_at']).where('admin_id', '=', bobId).execute();
    return { row, user: user.json<Record<string, unknown>>(), emails, events, sessions };
  }

  it("cannot read or find another school's admin: 404 by id, nothing by userName, externalId or address", async () => {
    const { scimA, scimB, bobId } = await twoSchools();
    const byId = expectScimError(await scimA.get(`/Users/${bobId}`), 404);
    // The same answer as an id that exists nowhere: no way to learn that B has such an admin.
    const nowhere = randomUUID();
    const missing = expectScimError(await scimA.get(`/Users/${nowhere}`), 404);
    expect(JSON.stringify(byId).replace(bobId, 'ID')).toBe(JSON.stringify(missing).replace(nowhere, 'ID'));

    const filters = [`userName eq "${BOB}"`, `userName eq "${BOB.toUpperCase()}"`, 'externalId eq "bob"', `emails.value eq "${BOB}"`, `emails[value eq "${BOB}"]`, `id eq "${bobId}"`];
    for (const filter of filters) {
      const url = `/Users?filter=${encodeURIComponent(filter)}`;
      const fromB = await scimB.get(url);
      expect(fromB.json(), `B: ${filter}`).toMatchObject({ totalResults: 1, Resources: [{ id: bobId }] });
      const fromA = await scimA.get(url);
      expect(fromA.statusCode).toBe(200);
      expect(fromA.json(), `A: ${filter}`).toMatchObject({ totalResults: 0, itemsPerPage: 0, Resources: [] });
    }
    const all = (await scimA.get('/Users?count=200')).json<{ totalResults: number; Resources: { userName: string }[] }>();
    expect(all.Resources.map((user) => user.userName)).toEqual(['carol@district.example']);
  });

  it("cannot create into, replace, patch, disable or delete another school's admin; bob is untouched", async () => {
    const { t, scimA, scimB, bobId, session } = await twoSchools();
    const before = await bobState(t, scimB, bobId);

    // A's token creates in A, whatever the body says: bob's userName, externalId and address are free there.
    const created = await scimA.post('/Users', entraUser(BOB, { id: bobId, externalId: 'bob' }));
    expect(created.statusCode, created.body).toBe(201);
    const copy = created.json<{ id: string }>();
    expect(copy.id).not.toBe(bobId);
    const stored = await t.services.db.selectFrom('admins').select(['school_key', 'username']).where('id', '=', copy.id).executeTakeFirstOrThrow();
    expect(stored).toEqual({ school_key: 'lincoln-high', username: BOB });
    expect((await scimB.get('/Users')).json()).toMatchObject({ totalResults: 1, Resources: [{ id: bobId }] });
    // A's own copy changes; bob does not.
    expect((await scimA.patch(`/Users/${copy.id}`, [{ op: 'replace', path: 'active', value: false }])).statusCode).toBe(200);

    const attempts: [string, () => Promise<LightMyRequestResponse>][] = [
      ['PUT', () => scimA.put(`/Users/${bobId}`, entraUser('mallory@district.example', { active: false }))],
      ['PATCH userName', () => scimA.patch(`/Users/${bobId}`, [{ op: 'replace', path: 'userName', value: 'mallory@district.example' }])],
      ['PATCH emails', () => scimA.patch(`/Users/${bobId}`, [{ op: 'add', path: 'emails', value: [{ value: 'mallory@evil.example', type: 'work' }] }])],
      ['PATCH active "False"', () => scimA.patch(`/Users/${bobId}`, [{ op: 'Replace', path: 'active', value: 'False' }])],
      ['PATCH active (no path)', () => scimA.patch(`/Users/${bobId}`, [{ op: 'replace', value: { active: false } }])],
      ['DELETE', () => scimA.delete(`/Users/${bobId}`)],
    ];
    for (const [name, attempt] of attempts) {
      const body = expectScimError(await attempt(), 404);
      expect(body.detail, name).toBe(`User ${bobId} not found`);
    }

    expect(await bobState(t, scimB, bobId)).toEqual(before);
    expect(before.row).toMatchObject({ disabled_at: null, deleted_at: null, school_key: 'roosevelt-middle', username: BOB, external_id: 'bob' });
    // His session was never ended.
    expect((await refresh(t.app, session.refresh_token)).statusCode).toBe(200);
  });

  it('refuses an unknown, malformed, revoked or missing token with 401 in SCIM form, before any 404', async () => {
    const { t, b, scimB, bobId } = await twoSchools();
    const spare = await scimSchool(t.services, b.schoolId);
    expect((await scimClient(t.app, spare.token).get('/Users')).statusCode).toBe(200);
    await revokeScimToken(t.services, spare.tokenId);

    const flipped = `${b.token.slice(0, -1)}${b.token.endsWith('A') ? 'B' : 'A'}`;
    const authorizations: [string, string | undefined][] = [
      ['missing', undefined],
      ['empty', ''],
      ['scheme only', 'Bearer'],
      ['unknown', `Bearer scim_${randomBytes(32).toString('base64url')}`],
      ['one character changed', `Bearer ${flipped}`],
      ['without its prefix', `Bearer ${b.token.slice('scim_'.length)}`],
      ['too long', `Bearer ${b.token}${'A'.repeat(200)}`],
      ['two words', `Bearer ${b.token} ${b.token}`],
      ['Basic', `Basic ${Buffer.from(`scim:${b.token}`).toString('base64')}`],
      ['an access token', `Bearer ${(await signIn(t.app, { schoolId: b.schoolId, username: BOB, password: 'correct horse battery staple' })).access_token}`],
      ['revoked', `Bearer ${spare.token}`],
    ];
    const before = await bobState(t, scimB, bobId);
    const requests: [method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown][] = [
      ['GET', '/Users'],
      ['GET', `/Users/${bobId}`],
      ['GET', `/Users?filter=${encodeURIComponent(`userName eq "${BOB}"`)}`],
      ['POST', '/Users', entraUser('eve@district.example')],
      ['PATCH', `/Users/${bobId}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'active', value: false }] }],
      ['DELETE', `/Users/${bobId}`],
      ['GET', '/ServiceProviderConfig'],
      ['GET', '/Groups'],
      ['POST', '/Groups', { displayName: 'x' }],
      ['GET', '/Nothing/here'],
    ];
    for (const [name, authorization] of authorizations) {
      for (const [method, url, body] of requests) {
        const response = await t.app.inject({
          method,
          url: `/scim/v2${url}`,
          headers: { ...(authorization === undefined ? {} : { authorization }), ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) },
          ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
        });
        const error = expectScimError(response, 401);
        expect(response.headers['www-authenticate'], `${name}: ${method} ${url}`).toBe('Bearer realm="scim"');
        expect(error.detail).toBe('A valid SCIM bearer token is required');
      }
    }
    // A valid token gets the 404 these unknown paths hide behind the 401.
    expectScimError(await scimB.get('/Groups'), 404);
    expect((await scimB.get('/Groups')).headers['www-authenticate']).toBeUndefined();
    expect(await bobState(t, scimB, bobId)).toEqual(before);
    expect(await t.services.db.selectFrom('admins').select('username').where('username', '=', 'eve@district.example').execute()).toEqual([]);
  });
});
