import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { rotateRefreshToken } from '../../src/db/queries/refresh-tokens.js';
import { TEST_DIALECTS, createTestDatabase } from '../helpers/database.js';

const T0 = 1_700_000_000;

describe.each(TEST_DIALECTS)('rotateRefreshToken on %s', (dialect) => {
  let database: Database;
  beforeEach(async () => {
    database = await createTestDatabase(dialect);
    await migrateToLatest(database);
    const db = database.db;
    await db.insertInto('schools').values({ key: 'k', school_id: 'k', name: 'K', suspended_at: null, created_at: T0 }).execute();
    await db
      .insertInto('admins')
      .values({ id: 'a1', school_key: 'k', username_key: 'u', username: 'u', password_hash: 'x', disabled_at: null, created_at: T0, password_changed_at: T0 })
      .execute();
    await db
      .insertInto('sessions')
      .values({ id: 's1', admin_id: 'a1', created_at: T0, last_used_at: T0, expires_at: T0 + 86_400, revoked_at: null, revoke_reason: null, ip: null, user_agent: null })
      .execute();
    await db.insertInto('refresh_tokens').values({ token_hash: 'h0', session_id: 's1', created_at: T0, consumed_at: null, successor_sealed: null }).execute();
  });
  afterEach(() => database.close());

  const rotation = (from: string, to: string, now: number, touchSession: boolean) => ({
    tokenHash: from,
    sessionId: 's1',
    successorHash: to,
    successorSealed: `sealed ${to}`,
    now,
    touchSession,
  });
  const tokens = () => database.db.selectFrom('refresh_tokens').selectAll().orderBy('created_at').orderBy('token_hash').execute();
  const lastUsed = async () => Number((await database.db.selectFrom('sessions').select('last_used_at').executeTakeFirstOrThrow()).last_used_at);

  it('consumes the token, stores its successor, and moves the idle clock only when told to', async () => {
    expect(await rotateRefreshToken(database.db, rotation('h0', 'h1', T0 + 10, false))).toBe(true);
    expect(await lastUsed()).toBe(T0);
    expect(await rotateRefreshToken(database.db, rotation('h1', 'h2', T0 + 70, true))).toBe(true);
    expect(await lastUsed()).toBe(T0 + 70);

    const rows = (await tokens()).map((row) => ({ ...row, created_at: Number(row.created_at), consumed_at: row.consumed_at === null ? null : Number(row.consumed_at) }));
    expect(rows).toEqual([
      { token_hash: 'h0', session_id: 's1', created_at: T0, consumed_at: T0 + 10, successor_sealed: 'sealed h1' },
      { token_hash: 'h1', session_id: 's1', created_at: T0 + 10, consumed_at: T0 + 70, successor_sealed: 'sealed h2' },
      { token_hash: 'h2', session_id: 's1', created_at: T0 + 70, consumed_at: null, successor_sealed: null },
    ]);
  });

  it('refuses a token already consumed, writing nothing', async () => {
    expect(await rotateRefreshToken(database.db, rotation('h0', 'h1', T0 + 10, false))).toBe(true);
    expect(await rotateRefreshToken(database.db, rotation('h0', 'other', T0 + 20, true))).toBe(false);
    expect((await tokens()).map((row) => row.token_hash)).toEqual(['h0', 'h1']);
    expect(await lastUsed()).toBe(T0);
  });

  it('refuses a token of a revoked session, writing nothing', async () => {
    await database.db.updateTable('sessions').set({ revoked_at: T0 + 5, revoke_reason: 'logout' }).execute();
    expect(await rotateRefreshToken(database.db, rotation('h0', 'h1', T0 + 10, true))).toBe(false);
    expect(await tokens()).toHaveLength(1);
    expect((await tokens())[0]?.consumed_at).toBeNull();
    expect(await lastUsed()).toBe(T0);
  });

  it("works inside the caller's transaction, and rolls back with it", async () => {
    await expect(
      database.db.transaction().execute(async (trx) => {
        expect(await rotateRefreshToken(trx, rotation('h0', 'h1', T0 + 10, true))).toBe(true);
        expect((await trx.selectFrom('refresh_tokens').select('token_hash').execute()).map((row) => row.token_hash).sort()).toEqual(['h0', 'h1']);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect((await tokens()).map((row) => row.token_hash)).toEqual(['h0']);
    expect(await lastUsed()).toBe(T0);
  });
});
