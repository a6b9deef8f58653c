/**
 * The public revocation feed is bounded: pages of at most 1000 sids with a cursor for the rest,
 * and the unconditional answer is computed at most once per short window, so an anonymous flood
 * costs the database next to nothing.
 */
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { setAdminEnabled } from '../../../src/auth/accounts/admins.js';
import { useTestApps, seedAdmin, signIn, type TestApp } from '../../helpers/app.js';
import { logout } from '../../helpers/contract.js';
import { insertSessions } from '../../helpers/bulk-sessions.js';
import { TEST_DIALECTS } from '../../helpers/database.js';

const sidOf = (token: string) => decodeJwt(token).sid as string;

interface Page {
  sids: string[];
  cursor: string;
  has_more: boolean;
}

async function feed(t: TestApp, since?: string, headers: Record<string, string> = {}) {
  const url = since === undefined ? '/auth/revocations' : `/auth/revocations?since=${encodeURIComponent(since)}`;
  const response = await t.app.inject({ method: 'GET', url, headers });
  return { response, body: response.statusCode === 200 ? response.json<Page>() : undefined };
}

describe.each(TEST_DIALECTS)('GET /auth/revocations pages on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('answers at most 1000 sids per page, with has_more and a cursor that reaches every ended session exactly once', async () => {
    const t = await open();
    const alice = await seedAdmin(t.services);
    const bulk = await insertSessions(t.services, alice.username, 2100);
    await setAdminEnabled(t.services, { schoolId: alice.schoolId, username: alice.username }, false);
    await setAdminEnabled(t.services, { schoolId: alice.schoolId, username: alice.username }, true);
    const last = await signIn(t.app, alice);
    await logout(t.app, last.refresh_token);

    const seen: string[] = [];
    const sizes: number[] = [];
    let page = (await feed(t)).body!;
    for (;;) {
      seen.push(...page.sids);
      sizes.push(page.sids.length);
      if (!page.has_more) break;
      page = (await feed(t, page.cursor)).body!;
    }
    expect(sizes).toEqual([1000, 1000, 101]);
    expect(seen.at(-1)).toBe(sidOf(last.access_token));
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual([...bulk, sidOf(last.access_token)].sort());
    expect((await feed(t, page.cursor)).body).toEqual({ sids: [], cursor: page.cursor, has_more: false });
  });

  it('computes the answer without `since` at most once per 2 s; ETag/304 still work', async () => {
    const t = await open();
    const alice = await seedAdmin(t.services);
    const [first, second] = [await signIn(t.app, alice), await signIn(t.app, alice)];
    await logout(t.app, first.refresh_token);
    const before = await feed(t);
    expect(before.body?.sids).toEqual([sidOf(first.access_token)]);
    const etag = String(before.response.headers.etag);

    await logout(t.app, second.refresh_token);
    t.clock.advance(1);
    const cached = await feed(t, undefined, { 'if-none-match': etag });
    expect(cached.response.statusCode).toBe(304);
    expect(cached.response.headers.etag).toBe(etag);
    // A cursor is answered from the database at once.
    expect((await feed(t, before.body!.cursor)).body?.sids).toEqual([sidOf(second.access_token)]);

    t.clock.advance(1);
    const fresh = await feed(t, undefined, { 'if-none-match': etag });
    expect(fresh.response.statusCode).toBe(200);
    expect(fresh.body?.sids).toEqual([sidOf(first.access_token), sidOf(second.access_token)]);
    expect(fresh.body?.has_more).toBe(false);
  });

  it('shares one database read among simultaneous requests without `since`', async () => {
    const t = await open();
    const alice = await seedAdmin(t.services);
    const session = await signIn(t.app, alice);
    const answers = feed(t);
    await logout(t.app, session.refresh_token);
    const all = await Promise.all([answers, ...Array.from({ length: 19 }, () => feed(t))]);
    expect(new Set(all.map((answer) => answer.response.body)).size).toBe(1);
  });
});
