import { describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { endSessions } from '../../../src/auth/sessions/end-sessions.js';
import { revokeSessionsOfAdmin } from '../../../src/auth/accounts/session-control.js';
import { inTransaction } from '../../../src/db/database.js';
import { postJson, seedAdmin, signIn, useTestApps, type TestApp } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';

const CONTEXT = { ip: '192.0.2.9', userAgent: 'test' };

async function events(t: TestApp) {
  return t.services.db.selectFrom('events').select(['type', 'username', 'admin_id', 'session_id', 'detail']).where('type', '=', 'session.revoked').orderBy('id').execute();
}

async function liveSessions(t: TestApp) {
  return t.services.db.selectFrom('sessions').select(['id', 'revocation_seq']).where('revoked_at', 'is', null).execute();
}

describe.each(TEST_DIALECTS)('endSessions, the one way sessions end (%s)', (dialect) => {
  const open = useTestApps(dialect);

  it('ends every live session in the scope, gives each a feed position and writes one event naming the owner', async () => {
    const t = await open();
    const alice = await seedAdmin(t.services);
    const bob = await seedAdmin(t.services, { username: 'bob' });
    const [first, second] = [await signIn(t.app, alice), await signIn(t.app, alice)];
    const bobs = await signIn(t.app, bob);
    const adminId = String(decodeJwt(first.access_token).sub);
    const detail = (count: number) => `${count} ended here`;
    const ended = await endSessions(t.services, { scope: { adminId }, reason: 'revoked', audit: { context: CONTEXT, type: 'session.revoked', detail } });
    expect(ended.map((session) => session.id).sort()).toEqual([first, second].map((tokens) => String(decodeJwt(tokens.access_token).sid)).sort());
    expect(await liveSessions(t)).toEqual([{ id: String(decodeJwt(bobs.access_token).sid), revocation_seq: null }]);
    const positions = await t.services.db.selectFrom('sessions').select('revocation_seq').where('admin_id', '=', adminId).execute();
    expect(new Set(positions.map((row) => row.revocation_seq)).size).toBe(1);
    expect(positions[0]?.revocation_seq).toEqual(expect.any(Number));
    expect(await events(t)).toEqual([{ type: 'session.revoked', username: 'alice', admin_id: adminId, session_id: null, detail: '2 ended here' }]);
  });

  it('writes nothing when nothing in the scope is live, unless the event is to be recorded always', async () => {
    const t = await open();
    await seedAdmin(t.services);
    const audit = { context: CONTEXT, type: 'session.revoked' } as const;
    expect(await endSessions(t.services, { scope: { sessionId: 'no-such-session' }, reason: 'revoked', audit })).toEqual([]);
    expect(await events(t)).toEqual([]);
    const sequence = await t.services.db.selectFrom('revocation_sequence').select('last_position').executeTakeFirstOrThrow();
    await endSessions(t.services, { scope: { sessionId: 'no-such-session' }, reason: 'revoked', audit: { ...audit, always: true, detail: (count) => `${count}` } });
    expect(await events(t)).toEqual([expect.objectContaining({ detail: '0' })]);
    expect(await t.services.db.selectFrom('revocation_sequence').select('last_position').executeTakeFirstOrThrow()).toEqual(sequence);
  });

  it('ends nothing and records nothing when the transaction it joined rolls back', async () => {
    const t = await open();
    const alice = await seedAdmin(t.services);
    const tokens = await signIn(t.app, alice);
    const adminId = String(decodeJwt(tokens.access_token).sub);
    const failing = inTransaction(t.services.db, async (trx) => {
      await endSessions({ ...t.services, db: trx }, { scope: { adminId }, reason: 'revoked', audit: { context: CONTEXT, type: 'session.revoked' } });
      throw new Error('the change the ending belongs to failed');
    });
    await expect(failing).rejects.toThrow('the change the ending belongs to failed');
    expect(await liveSessions(t)).toHaveLength(1);
    expect(await events(t)).toEqual([]);
    expect((await postJson(t.app, '/auth/refresh', { refresh_token: tokens.refresh_token })).statusCode).toBe(200);
  });

  it('an operator ending the sessions while the admin refreshes and signs in leaves no live session from before, and one event that counts every ending', async () => {
    const t = await open({ REFRESH_TOKEN_ROTATION: 'on' });
    const alice = await seedAdmin(t.services);
    const sessions = await Promise.all(Array.from({ length: 4 }, () => signIn(t.app, alice)));
    const before = new Set(sessions.map((tokens) => String(decodeJwt(tokens.access_token).sid)));
    const refreshes = sessions.map((tokens) => postJson(t.app, '/auth/refresh', { refresh_token: tokens.refresh_token }));
    const login = postJson(t.app, '/admin/auth/login', { school_id: alice.schoolId, username: alice.username, password: alice.password });
    const endedCount = await revokeSessionsOfAdmin(t.services, alice);
    await Promise.all([...refreshes, login]);
    const live = await liveSessions(t);
    expect(live.filter((session) => before.has(session.id))).toEqual([]);
    const revoked = await t.services.db.selectFrom('sessions').select('id').where('revoke_reason', '=', 'revoked').execute();
    expect(revoked.length).toBe(endedCount);
    expect(await events(t)).toEqual([expect.objectContaining({ detail: `${endedCount} sessions ended` })]);
  });
});
