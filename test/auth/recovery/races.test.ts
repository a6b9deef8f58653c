/**
 * Password recovery under concurrency, on each database: two resets with one code, a reset beside
 * a sign-in with the old password, beside `admin disable` and `school suspend`. Gated runs force
 * the interesting order (both resets past the code check before either commits; the operator's
 * action between the reset's check and its transaction); free runs race for real, many rounds.
 */
import { describe, expect, it, vi } from 'vitest';
import { changePassword, setAdminEnabled } from '../../../src/auth/accounts/admins.js';
import { suspendSchool } from '../../../src/auth/accounts/schools.js';
import { useTestApps, seedAdmin, signIn } from '../../helpers/app.js';
import { me, refresh } from '../../helpers/contract.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { gate } from '../../helpers/gate.js';
import { INVALID_CODE, adminRow, issueCode, liveSessions, postReset, resetOutcome as reset, resetsHeldBeforeTransaction } from '../../helpers/recovery.js';

const ROUNDS = 8;

const ticks = async (count: number) => {
  for (let i = 0; i < count; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

describe.each(TEST_DIALECTS)('password recovery races on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('two resets with one code, both past the code check: one 204, one 401, the winner’s password, one event', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const code = await issueCode(t, admin);
    const passwords = ['the first new passphrase', 'the second new passphrase'];
    const held = resetsHeldBeforeTransaction(t)(2);
    const answers = Promise.all(passwords.map((password) => postReset(t, admin, code, password)));
    await held.allHeld;
    held.release();
    const [first, second] = await answers;
    expect([first?.statusCode, second?.statusCode].sort()).toEqual([204, 401]);
    const winner = first?.statusCode === 204 ? 0 : 1;
    expect((winner === 0 ? second : first)?.body).toBe(INVALID_CODE);
    const { password_hash } = await adminRow(t);
    expect(await t.services.hasher.verify(password_hash, passwords[winner] ?? '')).toBe(true);
    expect(await t.services.hasher.verify(password_hash, passwords[1 - winner] ?? '')).toBe(false);
    const changed = await t.services.db.selectFrom('events').select('detail').where('type', '=', 'admin.password_changed').execute();
    expect(changed).toEqual([{ detail: 'password recovery: 0 sessions ended' }]);
    expect(await t.services.db.selectFrom('events').select('type').where('type', '=', 'admin.password_recovery_failed').execute()).toHaveLength(1);
  });

  it('two resets with one code, free-running, round after round: exactly one wins each time', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    for (let round = 0; round < ROUNDS; round += 1) {
      const code = await issueCode(t, admin);
      const outcomes = await Promise.all(['a', 'b'].map((side) => reset(t, admin, code, `round ${round} passphrase ${side}`, `198.51.100.${round}`)));
      expect(outcomes.sort()).toEqual(['done', 'refused']);
    }
    const changed = await t.services.db.selectFrom('events').select('detail').where('type', '=', 'admin.password_changed').execute();
    expect(changed).toHaveLength(ROUNDS);
  });

  it('a sign-in with the old password that was checked before the reset committed leaves no live session', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const before = await signIn(t.app, admin);
    const code = await issueCode(t, admin);
    const released = gate();
    const verified = gate();
    const verify = t.services.hasher.verify.bind(t.services.hasher);
    vi.spyOn(t.services.hasher, 'verify').mockImplementation(async (hash, password) => {
      const matches = await verify(hash, password);
      verified.open();
      await released.opened;
      return matches;
    });
    const login = t.app.inject({ method: 'POST', url: '/admin/auth/login', headers: { 'content-type': 'application/json' }, payload: { school_id: admin.schoolId, username: admin.username, password: admin.password } });
    await verified.opened;
    expect((await postReset(t, admin, code, 'a passphrase chosen by mail')).statusCode).toBe(204);
    released.open();
    expect((await login).statusCode).toBe(401);
    expect((await refresh(t.app, before.refresh_token)).statusCode).toBe(401);
    expect((await me(t.app, before.access_token)).statusCode).toBe(401);
    expect(await liveSessions(t)).toEqual([]);
  });

  it('a reset and a sign-in with the old password at once, whatever commits first, leave no session of the old password', async () => {
    const t = await open();
    let admin = await seedAdmin(t.services);
    for (let round = 0; round < ROUNDS; round += 1) {
      const code = await issueCode(t, admin);
      const next = `round ${round} recovered passphrase`;
      const credentials = { school_id: admin.schoolId, username: admin.username, password: admin.password };
      const [login, answer] = await Promise.all([
        t.app.inject({ method: 'POST', url: '/admin/auth/login', remoteAddress: `203.0.113.${round}`, headers: { 'content-type': 'application/json' }, payload: credentials }),
        postReset(t, admin, code, next, `198.51.100.${round}`),
      ]);
      expect(answer.statusCode).toBe(204);
      expect([200, 401]).toContain(login.statusCode);
      if (login.statusCode === 200) expect((await refresh(t.app, login.json<{ refresh_token: string }>().refresh_token)).statusCode).toBe(401);
      expect(await liveSessions(t)).toEqual([]);
      admin = { ...admin, password: next };
    }
    // The last password works: the rounds did set it.
    await signIn(t.app, admin);
  });

  it('admin disable between the reset’s check and its transaction wins: 401, password unchanged, no session', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const session = await signIn(t.app, admin);
    const code = await issueCode(t, admin);
    const { password_hash } = await adminRow(t);
    const held = resetsHeldBeforeTransaction(t)(1);
    const answer = reset(t, admin, code, 'never to be set passphrase', '192.0.2.7');
    await held.allHeld;
    await setAdminEnabled(t.services, admin, false);
    held.release();
    expect(await answer).toBe('refused');
    expect(await adminRow(t)).toMatchObject({ password_hash, disabled_at: expect.any(Number) });
    expect((await refresh(t.app, session.refresh_token)).statusCode).toBe(401);
  });

  it('a reset and admin disable at once, round after round: the admin ends disabled, no session lives, a refused reset changed nothing', async () => {
    const t = await open();
    let admin = await seedAdmin(t.services);
    const hold = resetsHeldBeforeTransaction(t);
    // The disable starts 0 to 5 turns after the reset's transaction: the two meet at each of its statements.
    for (let round = 0; round < 2 * ROUNDS; round += 1) {
      await setAdminEnabled(t.services, admin, true);
      const session = await signIn(t.app, admin);
      const code = await issueCode(t, admin);
      const before = await adminRow(t);
      const next = `round ${round} recovered passphrase`;
      const held = hold(1);
      const resetting = reset(t, admin, code, next, `198.51.100.${round}`);
      await held.allHeld;
      held.release();
      await ticks(round % 6);
      const [outcome, disabled] = await Promise.allSettled([resetting, setAdminEnabled(t.services, admin, false)]);
      expect(disabled.status).toBe('fulfilled');
      expect(outcome).toMatchObject({ status: 'fulfilled', value: expect.stringMatching(/^(done|refused)$/) });
      const after = await adminRow(t);
      expect(after.disabled_at).not.toBeNull();
      if (outcome.status === 'fulfilled' && outcome.value === 'refused') expect(after.password_hash).toBe(before.password_hash);
      else admin = { ...admin, password: next };
      expect((await refresh(t.app, session.refresh_token)).statusCode).toBe(401);
      expect(await liveSessions(t)).toEqual([]);
    }
  });

  it('admin disable (even undone) or admin passwd before the reset makes the code unusable', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const disabledCode = await issueCode(t, admin);
    await setAdminEnabled(t.services, admin, false);
    await setAdminEnabled(t.services, admin, true);
    expect(await reset(t, admin, disabledCode, 'a passphrase after disable', '192.0.2.8')).toBe('refused');
    const passwdCode = await issueCode(t, admin);
    await changePassword(t.services, admin, 'the operator set this passphrase');
    const answer = await postReset(t, admin, passwdCode, 'a passphrase after passwd', '192.0.2.9');
    expect(answer.statusCode).toBe(401);
    expect(answer.body).toBe(INVALID_CODE);
    await signIn(t.app, { ...admin, password: 'the operator set this passphrase' });
  });

  it('a reset in a suspended school is refused, whether the suspension came before or during it', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { password_hash } = await adminRow(t);
    const during = await issueCode(t, admin);
    const held = resetsHeldBeforeTransaction(t)(1);
    const answer = postReset(t, admin, during, 'a passphrase while suspended', '192.0.2.10');
    await held.allHeld;
    await suspendSchool(t.services, admin.schoolId);
    held.release();
    expect((await answer).body).toBe(INVALID_CODE);
    const before = await issueCode(t, admin);
    const refused = await postReset(t, admin, before, 'another passphrase while suspended', '192.0.2.11');
    expect(refused.statusCode).toBe(401);
    expect((await adminRow(t)).password_hash).toBe(password_hash);
  });

  it('a code that expires while its reset hashes is refused: the transaction decides at its own time (TestClock)', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const hold = resetsHeldBeforeTransaction(t);
    for (const [late, outcome] of [[-1, 'done'], [0, 'refused']] as const) {
      const code = await issueCode(t, admin);
      const held = hold(1);
      const resetting = reset(t, admin, code, `a passphrase ${late} seconds late`, '192.0.2.12');
      await held.allHeld;
      t.clock.advance(t.config.passwordRecovery.ttl + late);
      held.release();
      expect(await resetting).toBe(outcome);
    }
  });
});
