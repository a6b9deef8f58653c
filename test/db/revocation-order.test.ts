/**
 * Feed positions become visible in the order they were given: a revocation that took position n+1
 * cannot commit before the one holding n, so a cursor read in between never passes n. On SQLite
 * writers are serialized by the database itself; on PostgreSQL the sequence row is held until commit.
 */
import { decodeJwt } from 'jose';
import { describe, expect, it, vi } from 'vitest';
import { revokeSessions } from '../../src/db/queries/session-ending.js';
import { useTestApps, seedAdmin, signIn, type TestApp } from '../helpers/app.js';
import { TEST_DIALECTS, adminQuery } from '../helpers/database.js';

const sidOf = (token: string) => decodeJwt(token).sid as string;

async function feed(t: TestApp, since?: string) {
  const url = since === undefined ? '/auth/revocations' : `/auth/revocations?since=${encodeURIComponent(since)}`;
  return (await t.app.inject({ method: 'GET', url })).json<{ sids: string[]; cursor: string }>();
}

/** Statements waiting for a lock on the sequence row (only this test's tables are named so). */
async function waitingForSequence(): Promise<number> {
  const { rows } = await adminQuery(
    `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query ilike '%update "revocation_sequence"%'`,
  );
  return (rows[0] as { n: number }).n;
}

describe.runIf(TEST_DIALECTS.includes('postgres'))('revocation positions on PostgreSQL', () => {
  const open = useTestApps('postgres');

  it('a second revocation waits for the first to commit, takes the next position, and the cursor never skips the first', async () => {
    const t = await open();
    const alice = await seedAdmin(t.services);
    const [a, b] = [await signIn(t.app, alice), await signIn(t.app, alice)];
    const start = await feed(t);
    const now = Math.floor(t.clock.now() / 1000);

    let tookPosition!: () => void;
    let release!: () => void;
    const taken = new Promise<void>((resolve) => (tookPosition = resolve));
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = t.services.db.transaction().execute(async (trx) => {
      await revokeSessions(trx, { sessionId: sidOf(a.access_token) }, 'revoked', now);
      tookPosition();
      await gate;
    });
    await taken;
    let secondDone = false;
    const second = revokeSessions(t.services.db, { sessionId: sidOf(b.access_token) }, 'revoked', now).then(() => {
      secondDone = true;
    });
    await vi.waitFor(async () => expect(await waitingForSequence()).toBeGreaterThan(0), { timeout: 5000, interval: 20 });
    expect(secondDone).toBe(false);
    expect((await feed(t, start.cursor)).sids).toEqual([]);

    release();
    await Promise.all([first, second]);
    const after = await feed(t, start.cursor);
    expect(after.sids).toEqual([sidOf(a.access_token), sidOf(b.access_token)]);
    const rows = await t.services.db.selectFrom('sessions').select(['id', 'revocation_seq']).orderBy('revocation_seq').execute();
    expect(rows.map((row) => row.id)).toEqual([sidOf(a.access_token), sidOf(b.access_token)]);
    expect(Number(rows[1]?.revocation_seq)).toBe(Number(rows[0]?.revocation_seq) + 1);
  });
});
