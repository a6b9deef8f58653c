import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { rotateRefreshToken, type RotationAttempt } from '../../src/db/queries/refresh-tokens.js';
import { SEEDED_SESSION_LIFETIME, TEST_DIALECTS, createTestDatabase, seedRefreshGrants } from '../helpers/database.js';

const T0 = 1_700_000_000;
const IDLE = 3600;
const LIFETIME = SEEDED_SESSION_LIFETIME;

describe.each(TEST_DIALECTS)('rotateRefreshToken on %s', (dialect) => {
  let database: Database;
  beforeEach(async () => {
    database = await createTestDatabase(dialect);
    await migrateToLatest(database);
    await seedRefreshGrants(database, T0, [['s1', 'h0']]);
  });
  afterEach(() => database.close());

  /** An attempt at `now` with the idle clock due after 60 s, as refresh.ts makes them. */
  const attempt = (from: string, to: string, now: number): RotationAttempt => ({
    tokenHash: from,
    successorHash: to,
    successorSealed: `sealed ${to}`,
    now,
    idleTimeout: IDLE,
    touchAtOrBefore: now - 60,
  });
  const tokens = async () =>
    (await database.db.selectFrom('refresh_tokens').selectAll().orderBy('created_at').orderBy('token_hash').execute()).map((row) => ({
      ...row,
      created_at: Number(row.created_at),
      consumed_at: row.consumed_at === null ? null : Number(row.consumed_at),
    }));
  const lastUsed = async () => Number((await database.db.selectFrom('sessions').select('last_used_at').executeTakeFirstOrThrow()).last_used_at);

  it('consumes the token, stores its successor, returns the grant as it was, and moves the idle clock only when due', async () => {
    const first = await rotateRefreshToken(database.db, attempt('h0', 'h1', T0 + 10));
    expect(first.rotated).toBe(true);
    expect(first.grant).toMatchObject({ session_id: 's1', admin_id: 'a1', username: 'u', school_id: 'k', consumed_at: null, last_used_at: T0 });
    expect(await lastUsed()).toBe(T0);
    expect((await rotateRefreshToken(database.db, attempt('h1', 'h2', T0 + 70))).rotated).toBe(true);
    expect(await lastUsed()).toBe(T0 + 70);

    expect(await tokens()).toEqual([
      { token_hash: 'h0', session_id: 's1', created_at: T0, consumed_at: T0 + 10, successor_sealed: 'sealed h1' },
      { token_hash: 'h1', session_id: 's1', created_at: T0 + 10, consumed_at: T0 + 70, successor_sealed: 'sealed h2' },
      { token_hash: 'h2', session_id: 's1', created_at: T0 + 70, consumed_at: null, successor_sealed: null },
    ]);
  });

  it('refuses a token already consumed, writing nothing, and returns its grant', async () => {
    expect((await rotateRefreshToken(database.db, attempt('h0', 'h1', T0 + 10))).rotated).toBe(true);
    const again = await rotateRefreshToken(database.db, attempt('h0', 'other', T0 + 80));
    expect(again).toMatchObject({ rotated: false, grant: { consumed_at: T0 + 10, successor_sealed: 'sealed h1' } });
    expect((await tokens()).map((row) => row.token_hash)).toEqual(['h0', 'h1']);
    expect(await lastUsed()).toBe(T0);
  });

  it('returns no grant for an unknown token, writing nothing', async () => {
    expect(await rotateRefreshToken(database.db, attempt('unknown', 'h1', T0 + 10))).toEqual({ grant: undefined, rotated: false });
    expect(await tokens()).toHaveLength(1);
  });

  const ended: [string, (db: Database['db']) => Promise<unknown>, number][] = [
    ['revoked', (db) => db.updateTable('sessions').set({ revoked_at: T0 + 5, revoke_reason: 'logout' }).execute(), T0 + 10],
    ['at another credential epoch', (db) => db.updateTable('admins').set({ credential_epoch: 1 }).execute(), T0 + 10],
    ['of a disabled admin', (db) => db.updateTable('admins').set({ disabled_at: T0 + 5 }).execute(), T0 + 10],
    ['of a suspended school', (db) => db.updateTable('schools').set({ suspended_at: T0 + 5 }).execute(), T0 + 10],
    ['idle a second past the timeout', () => Promise.resolve(), T0 + IDLE + 1],
    ['at its absolute lifetime', (db) => db.updateTable('sessions').set({ last_used_at: T0 + LIFETIME - 100 }).execute(), T0 + LIFETIME],
  ];
  it.each(ended)('refuses a token of a session %s, writing nothing', async (_, end, now) => {
    await end(database.db);
    const before = { tokens: await tokens(), lastUsed: await lastUsed() };
    const outcome = await rotateRefreshToken(database.db, attempt('h0', 'h1', now));
    expect(outcome.rotated).toBe(false);
    expect(outcome.grant?.session_id).toBe('s1');
    expect({ tokens: await tokens(), lastUsed: await lastUsed() }).toEqual(before);
  });

  it('rotates at the last second of each limit', async () => {
    expect((await rotateRefreshToken(database.db, attempt('h0', 'h1', T0 + IDLE))).rotated).toBe(true);
    await database.db.updateTable('sessions').set({ last_used_at: T0 + LIFETIME - 100 }).execute();
    expect((await rotateRefreshToken(database.db, attempt('h1', 'h2', T0 + LIFETIME - 1))).rotated).toBe(true);
  });

  it("works inside the caller's transaction, and rolls back with it", async () => {
    await expect(
      database.db.transaction().execute(async (trx) => {
        expect((await rotateRefreshToken(trx, attempt('h0', 'h1', T0 + 70))).rotated).toBe(true);
        expect((await trx.selectFrom('refresh_tokens').select('token_hash').execute()).map((row) => row.token_hash).sort()).toEqual(['h0', 'h1']);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect((await tokens()).map((row) => row.token_hash)).toEqual(['h0']);
    expect(await lastUsed()).toBe(T0);
  });
});
