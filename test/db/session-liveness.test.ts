import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { isSessionAlive, LIVENESS_SQL, sessionAliveSql, type SessionLiveness } from '../../src/db/queries/session-liveness.js';
import { SESSIONS_WITH_OWNER } from '../../src/db/queries/sessions.js';
import { TEST_DIALECTS, createTestDatabase } from '../helpers/database.js';

const NOW = 1_000_000;
const IDLE = 3_600;
const config = { refreshIdleTimeout: IDLE };

/** One session a case, each with its own admin and school, so that one case's state touches no other. */
interface Case {
  readonly alive: boolean;
  readonly session?: { expires_at?: number; last_used_at?: number; revoked_at?: number | null; credential_epoch?: number };
  readonly admin?: { disabled_at?: number | null; credential_epoch?: number };
  readonly school?: { suspended_at?: number | null };
}

const CASES: Record<string, Case> = {
  'alive': { alive: true },
  'revoked': { alive: false, session: { revoked_at: NOW - 1 } },
  'an older credential epoch': { alive: false, admin: { credential_epoch: 2 } },
  'expiring this second': { alive: false, session: { expires_at: NOW } },
  'expiring the next second': { alive: true, session: { expires_at: NOW + 1 } },
  'idle exactly the idle timeout': { alive: true, session: { last_used_at: NOW - IDLE } },
  'idle a second longer': { alive: false, session: { last_used_at: NOW - IDLE - 1 } },
  'its admin disabled': { alive: false, admin: { disabled_at: NOW - 1 } },
  'its school suspended': { alive: false, school: { suspended_at: NOW - 1 } },
};

async function seed(database: Database, id: string, state: Case): Promise<void> {
  await database.db.insertInto('schools').values({ key: id, school_id: id, name: id, suspended_at: null, created_at: 1, ...state.school }).execute();
  await database.db
    .insertInto('admins')
    .values({ id, school_key: id, username_key: id, username: id, password_hash: 'x', disabled_at: null, created_at: 1, password_changed_at: 1, ...state.admin })
    .execute();
  await database.db
    .insertInto('sessions')
    .values({ id, admin_id: id, created_at: 1, last_used_at: NOW - 10, expires_at: NOW + 100, revoked_at: null, revoke_reason: null, revocation_seq: null, ip: null, user_agent: null, credential_epoch: 0, ...state.session })
    .execute();
}

describe.each(TEST_DIALECTS)('when a session is alive, in JavaScript and in SQL, on %s', (dialect) => {
  let database: Database;
  beforeEach(async () => {
    database = await createTestDatabase(dialect);
    await migrateToLatest(database);
  });
  afterEach(() => database.close());

  it('isSessionAlive and sessionAliveSql agree on every edge, and each says what the case expects', async () => {
    const ids = Object.keys(CASES).map((_name, index) => `case-${index}`);
    for (const [index, state] of Object.values(CASES).entries()) await seed(database, ids[index]!, state);
    const { rows } = await sql<SessionLiveness & { id: string }>`select sessions.id, ${LIVENESS_SQL} from ${SESSIONS_WITH_OWNER}`.execute(database.db);
    const aliveInSql = await sql<{ id: string }>`select sessions.id from ${SESSIONS_WITH_OWNER} where ${sessionAliveSql(NOW, NOW - IDLE)}`.execute(database.db);
    const inSql = new Set(aliveInSql.rows.map((row) => row.id));
    const verdicts = Object.entries(CASES).map(([name, state], index) => {
      const row = rows.find((candidate) => candidate.id === ids[index])!;
      return { name, expected: state.alive, javascript: isSessionAlive(row, NOW, config), sql: inSql.has(ids[index]!) };
    });
    expect(verdicts).toEqual(verdicts.map(({ name, expected }) => ({ name, expected, javascript: expected, sql: expected })));
  });
});
