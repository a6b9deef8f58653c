/**
 * A reset's transaction meets an operator's in the database, in the orders free-running races hit
 * only now and then, forced here: the reset paused after it spent the code (holding that row),
 * or `school suspend` paused after it locked the admin's row. On PostgreSQL each waits for the
 * other's row locks; whatever the order, neither may fail (no deadlock) and a suspension that
 * committed first must refuse the reset. SQLite runs one writer at a time: the same outcomes.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { changePassword, setAdminEnabled } from '../../../src/auth/accounts/admins.js';
import { suspendSchool } from '../../../src/auth/accounts/schools.js';
import type { Dialect } from '../../../src/db/database.js';
import type * as AdminQueries from '../../../src/db/queries/admins.js';
import type * as SessionEnding from '../../../src/db/queries/session-ending.js';
import { useTestApps, seedAdmin, signIn, type TestApp } from '../../helpers/app.js';
import { refresh } from '../../helpers/contract.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { gate } from '../../helpers/gate.js';
import { adminRow, issueCode, resetOutcome } from '../../helpers/recovery.js';

/** Pauses the test sets: before the reset sets the password, before a suspension revokes sessions. */
const pauses = vi.hoisted(() => ({ beforePasswordUpdate: undefined as (() => Promise<void>) | undefined, beforeSuspensionRevokes: undefined as (() => Promise<void>) | undefined }));

vi.mock('../../../src/db/queries/admins.js', async (importOriginal) => {
  const original = await importOriginal<typeof AdminQueries>();
  return {
    ...original,
    updatePasswordHashIfActive: async (...args: Parameters<typeof original.updatePasswordHashIfActive>) => {
      await pauses.beforePasswordUpdate?.();
      return original.updatePasswordHashIfActive(...args);
    },
  };
});

vi.mock('../../../src/db/queries/session-ending.js', async (importOriginal) => {
  const original = await importOriginal<typeof SessionEnding>();
  return {
    ...original,
    revokeSessions: async (...args: Parameters<typeof original.revokeSessions>) => {
      if (args[2] === 'school_suspended') await pauses.beforeSuspensionRevokes?.();
      return original.revokeSessions(...args);
    },
  };
});

/** A pause: `reached` once the paused work got there, `resume` lets it on. */
function pause(): { reached: Promise<void>; resume: () => void; wait: () => Promise<void> } {
  const reached = gate();
  const resumed = gate();
  return {
    reached: reached.opened,
    resume: resumed.open,
    wait: async () => {
      reached.open();
      await resumed.opened;
    },
  };
}

/** Resolves once a statement matching `pattern` waits for a row lock (PostgreSQL), or after a while (SQLite). */
async function blockedOn(t: TestApp, dialect: Dialect, pattern: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (dialect === 'sqlite') return new Promise((resolve) => setTimeout(resolve, 100));
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and query like ${pattern}`.execute(t.services.db);
    if ((rows[0]?.n ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no statement like ${pattern} ever waited for a lock`);
}

describe.each(TEST_DIALECTS)('password recovery and operators, lock by lock, on %s', (dialect) => {
  const open = useTestApps(dialect);
  afterEach(() => {
    pauses.beforePasswordUpdate = undefined;
    pauses.beforeSuspensionRevokes = undefined;
  });

  it('admin disable while the reset holds its spent code: both commit, the admin ends disabled with no session', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const session = await signIn(t.app, admin);
    const code = await issueCode(t, admin);
    const held = pause();
    pauses.beforePasswordUpdate = held.wait;
    const resetting = resetOutcome(t, admin, code, 'a passphrase set by mail', '192.0.2.1');
    await held.reached;
    const disabling = setAdminEnabled(t.services, admin, false);
    await blockedOn(t, dialect, 'delete from "password_recoveries"%');
    held.resume();
    expect(await resetting).toBe('done');
    await disabling;
    const row = await adminRow(t);
    expect(row.disabled_at).not.toBeNull();
    expect(await t.services.hasher.verify(row.password_hash, 'a passphrase set by mail')).toBe(true);
    expect((await refresh(t.app, session.refresh_token)).statusCode).toBe(401);
  });

  it('admin passwd while the reset holds its spent code: both commit, the operator’s password, set last, stands', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const code = await issueCode(t, admin);
    const held = pause();
    pauses.beforePasswordUpdate = held.wait;
    const resetting = resetOutcome(t, admin, code, 'a passphrase set by mail', '192.0.2.1');
    await held.reached;
    const passwd = changePassword(t.services, admin, 'the operator set this passphrase');
    await blockedOn(t, dialect, 'delete from "password_recoveries"%');
    held.resume();
    expect(await resetting).toBe('done');
    await passwd;
    const { password_hash } = await adminRow(t);
    expect(await t.services.hasher.verify(password_hash, 'the operator set this passphrase')).toBe(true);
    const changed = await t.services.db.selectFrom('events').select('detail').where('type', '=', 'admin.password_changed').orderBy('id').execute();
    expect(changed).toEqual([{ detail: 'password recovery: 0 sessions ended' }, { detail: '0 sessions ended' }]);
  });

  it('a suspension that locked the admin before the reset and commits first refuses the reset', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const code = await issueCode(t, admin);
    const { password_hash } = await adminRow(t);
    const held = pause();
    pauses.beforeSuspensionRevokes = held.wait;
    const suspending = suspendSchool(t.services, admin.schoolId);
    await held.reached;
    const resetting = resetOutcome(t, admin, code, 'a passphrase while suspending', '192.0.2.1');
    await blockedOn(t, dialect, '%"schools"%');
    held.resume();
    await suspending;
    expect(await resetting).toBe('refused');
    expect((await adminRow(t)).password_hash).toBe(password_hash);
  });
});
