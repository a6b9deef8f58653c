/** GET /auth/revocations (docs/revocation-feed.md), the feed the platform's verifiers follow, with the injected clock. */
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { setAdminEnabled } from '../../../src/auth/accounts/admins.js';
import { useTestApps, postJson, seedAdmin, signIn, PASSWORD, type TestApp } from '../../helpers/app.js';
import { logout } from '../../helpers/contract.js';
import { TEST_DIALECTS } from '../../helpers/database.js';

const sidOf = (token: string) => decodeJwt(token).sid as string;

async function feed(t: TestApp, since?: string, headers: Record<string, string> = {}) {
  const url = since === undefined ? '/auth/revocations' : `/auth/revocations?since=${encodeURIComponent(since)}`;
  const response = await t.app.inject({ method: 'GET', url, headers });
  return { response, body: response.statusCode === 200 ? response.json<{ sids: string[]; cursor: string; has_more: boolean }>() : undefined };
}

describe.each(TEST_DIALECTS)('GET /auth/revocations on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('lists a logged-out session, cacheable for 5 s, with an ETag that answers 304 until something changes', async () => {
    const t = await open();
    const alice = await seedAdmin(t.services);
    const empty = await feed(t);
    expect(empty.body?.sids).toEqual([]);
    expect(empty.response.headers['cache-control']).toBe('public, max-age=5');
    const etag = String(empty.response.headers.etag);
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const unchanged = await feed(t, undefined, { 'if-none-match': etag });
    expect(unchanged.response.statusCode).toBe(304);
    expect(unchanged.response.body).toBe('');
    const session = await signIn(t.app, alice);
    expect((await logout(t.app, session.refresh_token)).statusCode).toBe(204);
    // The answer without `since` is computed at most once every 2 s (revocation-pages.test.ts).
    t.clock.advance(2);
    const changed = await feed(t, undefined, { 'if-none-match': etag });
    expect(changed.response.statusCode).toBe(200);
    expect(changed.body?.sids).toEqual([sidOf(session.access_token)]);
    expect(changed.response.headers.etag).not.toBe(etag);
    expect((await feed(t, undefined, { 'if-none-match': `W/${String(changed.response.headers.etag)}` })).response.statusCode).toBe(304);
  });

  it('keeps an ended session for ACCESS_TOKEN_TTL + 60 s, then drops it', async () => {
    const t = await open({ ACCESS_TOKEN_TTL: '300' });
    const session = await signIn(t.app, await seedAdmin(t.services));
    const start = (await feed(t)).body!;
    await logout(t.app, session.refresh_token);
    t.clock.advance(360);
    expect((await feed(t)).body?.sids).toEqual([sidOf(session.access_token)]);
    expect((await feed(t, start.cursor)).body?.sids).toEqual([sidOf(session.access_token)]);
    t.clock.advance(1);
    expect((await feed(t, start.cursor)).body?.sids).toEqual([]);
    t.clock.advance(2);
    expect((await feed(t)).body?.sids).toEqual([]);
  });

  it('with since=<cursor>, lists only what ended after it; the cursor passes a revocation at once', async () => {
    const t = await open();
    const alice = await seedAdmin(t.services);
    const [first, second] = [await signIn(t.app, alice), await signIn(t.app, alice)];
    await logout(t.app, first.refresh_token);
    const start = (await feed(t)).body!;
    expect(start.sids).toEqual([sidOf(first.access_token)]);
    // Positions are given by the database and become visible in order: nothing can commit behind the cursor.
    expect((await feed(t, start.cursor)).body).toEqual({ sids: [], cursor: start.cursor, has_more: false });
    await logout(t.app, second.refresh_token);
    const next = (await feed(t, start.cursor)).body!;
    expect(next.sids).toEqual([sidOf(second.access_token)]);
    expect((await feed(t, next.cursor)).body).toEqual({ sids: [], cursor: next.cursor, has_more: false });
  });

  it('lists the sessions ended by a password change, revoke-others and an operator disabling the admin', async () => {
    const t = await open();
    const alice = await seedAdmin(t.services);
    const [a, b, c] = [await signIn(t.app, alice), await signIn(t.app, alice), await signIn(t.app, alice)];
    const bearer = { authorization: `Bearer ${c.access_token}` };
    expect((await t.app.inject({ method: 'POST', url: '/admin/auth/sessions/revoke-others', headers: bearer })).statusCode).toBe(204);
    t.clock.advance(2);
    expect((await feed(t)).body?.sids.sort()).toEqual([sidOf(a.access_token), sidOf(b.access_token)].sort());
    const d = await signIn(t.app, alice);
    const changed = await postJson(t.app, '/admin/auth/password', { current_password: PASSWORD, new_password: 'another good passphrase' }, bearer);
    expect(changed.statusCode).toBe(204);
    t.clock.advance(2);
    expect((await feed(t)).body?.sids).toContain(sidOf(d.access_token));
    expect((await feed(t)).body?.sids).not.toContain(sidOf(c.access_token));
    await setAdminEnabled(t.services, { schoolId: alice.schoolId, username: alice.username }, false);
    t.clock.advance(2);
    expect((await feed(t)).body?.sids).toContain(sidOf(c.access_token));
  });

  it('answers 400 to a cursor it did not give out', async () => {
    const t = await open();
    for (const cursor of ['not a cursor', Buffer.from('abc:def').toString('base64url'), Buffer.from('12:a b').toString('base64url'), '']) {
      const { response } = await feed(t, cursor);
      expect(response.statusCode, cursor).toBe(400);
      expect(response.body, cursor).toBe('{"detail":"Invalid cursor"}');
    }
  });
});
