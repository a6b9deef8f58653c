import { canonicalKey } from '../../src/auth/identity.js';
import { accountOf, keys } from '../../src/auth/throttling/throttle-rules.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { prune } from '../../src/auth/housekeeping.js';
import { createTestApp, postJson, seedAdmin, signIn, type TestApp } from '../helpers/app.js';
import { TEST_DIALECTS } from '../helpers/database.js';

describe.each(TEST_DIALECTS)('prune on %s', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ REFRESH_TOKEN_ROTATION: 'on' }, dialect);
  });
  afterEach(() => t.close());

  const count = async (table: 'sessions' | 'refresh_tokens' | 'throttle_counters') =>
    Number((await t.services.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  it('deletes sessions (and their tokens) once they ended longer ago than the retention', async () => {
    const admin = await seedAdmin(t.services);
    const ended = await signIn(t.app, admin);
    const live = await signIn(t.app, admin);
    await postJson(t.app, '/auth/logout', { refresh_token: ended.refresh_token });
    await postJson(t.app, '/admin/auth/login', { school_id: admin.schoolId, username: admin.username, password: 'not the password' });
    expect(await count('sessions')).toBe(2);

    expect((await prune(t.services, { sessionDays: 7 })).sessions).toBe(0);
    // The logged-out session ended now; the other one ends by idleness an hour from now.
    t.clock.advance(7 * 86_400 + 1);
    expect((await prune(t.services, { sessionDays: 7 })).sessions).toBe(1);
    expect((await postJson(t.app, '/auth/refresh', { refresh_token: live.refresh_token })).statusCode).toBe(401);
    t.clock.advance(3600);
    expect((await prune(t.services, { sessionDays: 7 })).sessions).toBe(1);
    expect(await count('sessions')).toBe(0);
    expect(await count('refresh_tokens')).toBe(0);
  });

  it('never deletes a session the revocation feed still lists, whatever the retention asks for', async () => {
    const admin = await seedAdmin(t.services);
    const ended = await signIn(t.app, admin);
    await postJson(t.app, '/auth/logout', { refresh_token: ended.refresh_token });
    const listed = async () => (await t.app.inject({ method: 'GET', url: '/auth/revocations' })).json<{ sids: string[] }>().sids.length;
    t.clock.advance(1);
    const early = await prune(t.services, { sessionDays: 0 });
    expect(early.sessions).toBe(0);
    expect(early.sessionsKeptWithin).toBe(t.config.accessTokenTtl + 60);
    expect(await listed()).toBe(1);
    // ACCESS_TOKEN_TTL + 60 s after the logout, no token of the session can still be accepted.
    t.clock.advance(t.config.accessTokenTtl + 60);
    expect((await prune(t.services, { sessionDays: 0 })).sessions).toBe(1);
    expect((await prune(t.services, { sessionDays: 7 })).sessionsKeptWithin).toBeUndefined();
  });

  it('keeps a session in use and its rotated tokens', async () => {
    const admin = await seedAdmin(t.services);
    const session = await signIn(t.app, admin);
    const rotated = await postJson(t.app, '/auth/refresh', { refresh_token: session.refresh_token });
    expect(rotated.statusCode).toBe(200);
    t.clock.advance(3000);
    const deleted = await prune(t.services, { sessionDays: 0 });
    expect(deleted.sessions).toBe(0);
    expect(await count('refresh_tokens')).toBe(2);
    expect((await postJson(t.app, '/auth/refresh', { refresh_token: rotated.json().refresh_token })).statusCode).toBe(200);
  });

  it('deletes stale throttle counters but never a lockout', async () => {
    const admin = await seedAdmin(t.services);
    await postJson(t.app, '/admin/auth/login', { school_id: admin.schoolId, username: admin.username, password: 'not the password' });
    expect(await count('throttle_counters')).toBe(3);
    const account = keys(accountOf(canonicalKey(admin.schoolId), canonicalKey(admin.username)), '127.0.0.1').account;
    await t.services.db.updateTable('throttle_counters').set({ consecutive: 100 }).where('key', '=', account).execute();
    t.clock.advance(31 * 86_400);
    expect((await prune(t.services, { sessionDays: 7 })).counters).toBe(2);
    expect(await count('throttle_counters')).toBe(1);
  });
});
