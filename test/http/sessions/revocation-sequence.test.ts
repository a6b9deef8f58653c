/**
 * The feed's cursor follows the order in which the database ended sessions, not the writers'
 * clocks: a revocation stamped by a host whose clock is behind (a CLI elsewhere, a second
 * instance) still reaches a verifier that already holds a cursor.
 */
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { setAdminEnabled } from '../../../src/auth/accounts/admins.js';
import { suspendSchool } from '../../../src/auth/accounts/schools.js';
import { logout as endByLogout } from '../../../src/auth/sessions/logout.js';
import { revokeSessionById, revokeSessionsOfAdmin } from '../../../src/auth/accounts/session-control.js';
import { TestClock } from '../../helpers/clock.js';
import { useTestApps, postJson, seedAdmin, signIn, PASSWORD, type TestApp } from '../../helpers/app.js';
import { logout } from '../../helpers/contract.js';
import { TEST_DIALECTS } from '../../helpers/database.js';

const sidOf = (token: string) => decodeJwt(token).sid as string;

async function feed(t: TestApp, since?: string) {
  const url = since === undefined ? '/auth/revocations' : `/auth/revocations?since=${encodeURIComponent(since)}`;
  const response = await t.app.inject({ method: 'GET', url });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ sids: string[]; cursor: string }>();
}

/** The same services with a clock `seconds` behind the test's. */
function behind(t: TestApp, seconds: number): TestApp['services'] {
  return { ...t.services, clock: new TestClock(t.clock.now() - seconds * 1000) };
}

describe.each(TEST_DIALECTS)('the revocation feed cursor on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('delivers a revocation stamped by a writer whose clock is 45 s behind to a client holding a cursor', async () => {
    const t = await open();
    const alice = await seedAdmin(t.services);
    const [first, late] = [await signIn(t.app, alice), await signIn(t.app, alice)];
    await logout(t.app, first.refresh_token);
    t.clock.advance(31);
    const start = await feed(t);
    const caughtUp = await feed(t, start.cursor);
    expect(caughtUp.sids).toEqual([]);

    await endByLogout(behind(t, 45), late.refresh_token, { ip: '127.0.0.1', userAgent: 'cli' });
    expect((await feed(t, caughtUp.cursor)).sids).toEqual([sidOf(late.access_token)]);
  });

  it('answers a cursor of the older format (revoked_at:sid) with the whole list, not an error', async () => {
    const t = await open();
    const alice = await seedAdmin(t.services);
    const session = await signIn(t.app, alice);
    await logout(t.app, session.refresh_token);
    const old = Buffer.from(`${Math.floor(t.clock.now() / 1000) + 100}:zzzz`).toString('base64url');
    t.clock.advance(5);
    expect((await feed(t, old)).sids).toEqual([sidOf(session.access_token)]);
  });

  it('stamps every way a session ends with the next position, in the order they ended, whatever the writer clocks say', async () => {
    const t = await open({ REFRESH_TOKEN_ROTATION: 'on', REFRESH_REUSE_GRACE: '0' });
    const alice = await seedAdmin(t.services);
    const bob = await seedAdmin(t.services, { username: 'bob' });
    const carol = await seedAdmin(t.services, { schoolId: 'other-school', username: 'carol' });
    const s: Awaited<ReturnType<typeof signIn>>[] = [];
    for (let i = 0; i < 7; i += 1) s.push(await signIn(t.app, alice));
    const sid = (i: number) => sidOf(s[i]!.access_token);
    const bearer = { authorization: `Bearer ${s[6]!.access_token}` };
    const [b1, c1] = [await signIn(t.app, bob), await signIn(t.app, carol)];

    await endByLogout(behind(t, 45), s[0]!.refresh_token, { ip: null, userAgent: null });
    await revokeSessionById(behind(t, 10), sid(1));
    await t.app.inject({ method: 'DELETE', url: `/admin/auth/sessions/${sid(2)}`, headers: bearer });
    expect((await postJson(t.app, '/auth/refresh', { refresh_token: s[3]!.refresh_token })).statusCode).toBe(200);
    t.clock.advance(1);
    expect((await postJson(t.app, '/auth/refresh', { refresh_token: s[3]!.refresh_token })).statusCode).toBe(401);
    await t.app.inject({ method: 'POST', url: '/admin/auth/sessions/revoke-others', headers: bearer });
    const later = await signIn(t.app, alice);
    const changed = await postJson(t.app, '/admin/auth/password', { current_password: PASSWORD, new_password: 'another good passphrase' }, bearer);
    expect(changed.statusCode).toBe(204);
    await setAdminEnabled(behind(t, 30), { schoolId: alice.schoolId, username: alice.username }, false);
    await revokeSessionsOfAdmin(behind(t, 20), { schoolId: bob.schoolId, username: bob.username });
    await suspendSchool(behind(t, 40), carol.schoolId);

    const rows = await t.services.db.selectFrom('sessions').select(['id', 'revocation_seq', 'revoke_reason']).execute();
    const seqOf = (id: string) => Number(rows.find((row) => row.id === id)?.revocation_seq);
    const inOrderEnded = [sid(0), sid(1), sid(2), sid(3), sid(4), sidOf(later.access_token), sid(6), sidOf(b1.access_token), sidOf(c1.access_token)];
    const positions = inOrderEnded.map(seqOf);
    expect(positions.every((position) => position > 0)).toBe(true);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(new Set(positions).size).toBe(positions.length);
    // One statement (revoke-others) ended s[4] and s[5]: one position.
    expect(seqOf(sid(5))).toBe(seqOf(sid(4)));
    expect(new Set(rows.map((row) => row.revoke_reason))).toEqual(
      new Set(['logout', 'revoked', 'revoked_by_admin', 'refresh_token_reuse', 'password_changed', 'admin_disabled', 'school_suspended']),
    );
  });
});
