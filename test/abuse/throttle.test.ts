/**
 * Brute-force throttling (docs/design.md), through the real HTTP application on SQLite and
 * PostgreSQL, with the injected clock: layer 1 per (account, client IP), layer 2 per account
 * across IPs (sparing IPs that signed in before), layer 3 per client IP (spraying), layer 4 the
 * lockout after 100 consecutive failures.
 */
import { describe, expect, it, vi } from 'vitest';
import { changePassword, setAdminEnabled, unlockAdmin } from '../../src/auth/accounts/admins.js';
import { listEvents } from '../../src/db/queries/events.js';
import { useTestApps, seedAdmin, type TestApp } from '../helpers/app.js';
import { TEST_DIALECTS } from '../helpers/database.js';
import { LOGIN, attempt, countRows, ipFor, outcome, refused, throttled, wrong, type Creds } from '../helpers/abuse-login.js';

const DAY = 86_400;

describe.each(TEST_DIALECTS)('login throttling on %s', (dialect) => {
  const open = useTestApps(dialect);

  async function events(t: TestApp, type: string) {
    return (await listEvents(t.services.db, { limit: 100_000 })).filter((event) => event.type === type).reverse();
  }

  describe('layer 1: per (account, client IP)', () => {
    it('lets 5 failures through, then waits exactly 1, 2, 4 ... s after the last failure, capped at 900 s', async () => {
      const t = await open();
      const admin = await seedAdmin(t.services);
      const ip = '203.0.113.7';
      for (let i = 1; i <= 5; i++) expect(outcome(await attempt(t.app, wrong(admin), ip)), `failure ${i}`).toEqual(refused);
      const seen: number[] = [];
      for (let failures = 5; failures <= 18; failures++) {
        const wait = Math.min(2 ** (failures - 5), 900);
        // Right away: throttled with exactly the wait; more throttled attempts do not extend it.
        for (let repeat = 0; repeat < 2; repeat++) {
          const answer = await attempt(t.app, wrong(admin), ip);
          expect(outcome(answer), `after ${failures} failures`).toEqual(throttled(wait));
          seen.push(answer.retryAfter!);
        }
        if (wait > 1) {
          t.clock.advance(wait - 1);
          expect(outcome(await attempt(t.app, wrong(admin), ip)), `1 s before the end of a ${wait} s wait`).toEqual(throttled(1));
        }
        t.clock.advance(1);
        // The wait is over: the attempt is checked again (and is one more failure).
        expect(outcome(await attempt(t.app, wrong(admin), ip)), `after waiting ${wait} s`).toEqual(refused);
      }
      expect(seen.filter((_, index) => index % 2 === 0)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900, 900]);
      expect(Math.max(...seen)).toBeLessThanOrEqual(900);
    });

    it('throttles even the right password while the wait runs, and a success resets the counter of that IP only', async () => {
      const t = await open();
      const admin = await seedAdmin(t.services);
      const [a, b] = ['203.0.113.7', '203.0.113.8'];
      for (let i = 0; i < 5; i++) expect((await attempt(t.app, wrong(admin), b)).status).toBe(401);
      for (let i = 0; i < 5; i++) expect((await attempt(t.app, wrong(admin), a)).status).toBe(401);
      t.clock.advance(1);
      expect((await attempt(t.app, wrong(admin), a)).status).toBe(401);
      t.clock.advance(2);
      expect((await attempt(t.app, wrong(admin), a)).status).toBe(401);
      // 7 failures from a: the next attempt must wait 4 s, whatever the password.
      expect(outcome(await attempt(t.app, admin, a))).toEqual(throttled(4));
      t.clock.advance(4);
      expect((await attempt(t.app, admin, a)).status).toBe(200);
      // Reset for (account, a): 5 free failures again, then 1 s.
      for (let i = 1; i <= 5; i++) expect(outcome(await attempt(t.app, wrong(admin), a)), `failure ${i} after the success`).toEqual(refused);
      expect(outcome(await attempt(t.app, wrong(admin), a))).toEqual(throttled(1));
      // b's counter was not touched by a's success: its 5 failures (7 s ago) still count, so
      // its 6th is checked and the next one must wait 2 s.
      expect((await attempt(t.app, wrong(admin), b)).status).toBe(401);
      expect(outcome(await attempt(t.app, admin, b))).toEqual(throttled(2));
    });

    it('counts spellings of one account (case, width) as that account', async () => {
      const t = await open();
      const admin = await seedAdmin(t.services);
      const ip = '203.0.113.9';
      const spellings: [string, string][] = [
        ['lincoln-high', 'alice'],
        ['LINCOLN-HIGH', 'ALICE'],
        ['Lincoln-High', 'Alice'],
        ['ｌｉｎｃｏｌｎ－ｈｉｇｈ', 'ａｌｉｃｅ'],
        ['lincoln-HIGH', 'aLiCe'],
      ];
      for (const [schoolId, username] of spellings) {
        expect(outcome(await attempt(t.app, { schoolId, username, password: 'wrong' }, ip)), `${schoolId}/${username}`).toEqual(refused);
      }
      expect(outcome(await attempt(t.app, { ...admin, username: 'ALICE' }, ip))).toEqual(throttled(1));
      expect(outcome(await attempt(t.app, { ...admin, schoolId: 'LINCOLN-high', username: 'Ａｌｉｃｅ' }, ip))).toEqual(throttled(1));
    });

    it('does no password hashing for a throttled attempt, and exactly one for an allowed one', async () => {
      const t = await open();
      const admin = await seedAdmin(t.services);
      const unknown: Creds = { schoolId: admin.schoolId, username: 'nobody', password: 'whatever it is' };
      const verify = vi.spyOn(t.services.hasher, 'verify');
      const verifyDummy = vi.spyOn(t.services.hasher, 'verifyDummy');
      const hashCalls = () => ({ verify: verify.mock.calls.length, dummy: verifyDummy.mock.calls.length });
      for (const [creds, ip] of [
        [wrong(admin), '203.0.113.7'],
        [unknown, '203.0.113.8'],
      ] as const) {
        for (let i = 0; i < 5; i++) {
          const before = hashCalls();
          expect((await attempt(t.app, creds, ip)).status).toBe(401);
          const after = hashCalls();
          // verifyDummy goes through verify, so every allowed attempt is one verify call.
          expect(after.verify - before.verify, 'one verification per allowed attempt').toBe(1);
          expect(after.dummy - before.dummy).toBe(creds === unknown ? 1 : 0);
        }
        const before = hashCalls();
        for (let i = 0; i < 10; i++) expect((await attempt(t.app, creds, ip)).status).toBe(429);
        if (creds !== unknown) expect((await attempt(t.app, admin, ip)).status, 'right password while throttled').toBe(429);
        expect(hashCalls(), 'no hashing while throttled').toEqual(before);
      }
      const throttledEvents = await events(t, 'login.throttled');
      // One event per block, however many attempts it refused: the rest are counted, not recorded.
      expect(throttledEvents.length).toBe(2);
    });

    it('treats unknown schools, unknown users and disabled admins exactly like a wrong password', async () => {
      const t = await open();
      const admin = await seedAdmin(t.services);
      await seedAdmin(t.services, { username: 'bob' });
      await setAdminEnabled(t.services, { schoolId: admin.schoolId, username: 'bob' }, false);
      const cases: { name: string; creds: Creds; ip: string }[] = [
        { name: 'wrong password', creds: wrong(admin), ip: '198.51.100.1' },
        { name: 'unknown user', creds: { ...admin, username: 'mallory' }, ip: '198.51.100.2' },
        { name: 'unknown school', creds: { ...admin, schoolId: 'no-such-school' }, ip: '198.51.100.3' },
        { name: 'disabled admin, right password', creds: { ...admin, username: 'bob' }, ip: '198.51.100.4' },
      ];
      // One script, run step by step for every case (the clock is shared).
      const script: (number | 'try')[] = ['try', 'try', 'try', 'try', 'try', 'try', 'try', 1, 'try', 'try', 1, 'try', 1, 'try', 'try', 3, 'try', 1, 'try', 'try'];
      const seen = new Map<string, unknown[]>(cases.map((c) => [c.name, []]));
      for (const step of script) {
        if (step !== 'try') {
          t.clock.advance(step);
          continue;
        }
        for (const c of cases) {
          const answer = await attempt(t.app, c.creds, c.ip);
          seen.get(c.name)!.push({ ...outcome(answer), challenge: answer.response.headers['www-authenticate'] });
        }
      }
      const reference = seen.get('wrong password')!;
      expect(reference.filter((answer) => (answer as { status: number }).status === 429).length).toBeGreaterThan(3);
      expect(reference.map((answer) => (answer as { retryAfter?: number }).retryAfter)).toEqual([
        undefined, undefined, undefined, undefined, undefined, 1, 1, undefined, 2, 1, undefined, 4, 1, undefined, 8,
      ]);
      for (const c of cases) expect(seen.get(c.name), c.name).toEqual(reference);
    });
  });

  describe('layer 2: per account across IPs', () => {
    it('throttles new IPs from 50 failures with 2^(n-50) s, but not an IP that signed in before', async () => {
      const t = await open();
      const admin = await seedAdmin(t.services);
      const known = '192.0.2.10';
      expect((await attempt(t.app, admin, known)).status).toBe(200);
      for (let i = 0; i < 50; i++) expect(outcome(await attempt(t.app, wrong(admin), ipFor(i))), `failure ${i + 1}`).toEqual(refused);
      expect(outcome(await attempt(t.app, wrong(admin), ipFor(1000)))).toEqual(throttled(1));
      expect(outcome(await attempt(t.app, admin, ipFor(1001))), 'right password from a new IP').toEqual(throttled(1));
      // The known IP is exempt: its attempt is checked (failure 51, so new IPs now wait 2 s).
      expect(outcome(await attempt(t.app, wrong(admin), known))).toEqual(refused);
      expect(outcome(await attempt(t.app, wrong(admin), ipFor(1002)))).toEqual(throttled(2));
      t.clock.advance(2);
      expect(outcome(await attempt(t.app, wrong(admin), ipFor(1003)))).toEqual(refused);
      expect(outcome(await attempt(t.app, wrong(admin), ipFor(1004)))).toEqual(throttled(4));
      expect((await attempt(t.app, admin, known)).status, 'the real admin from a known IP').toBe(200);
      // The success reset the per-account counter.
      expect(outcome(await attempt(t.app, wrong(admin), ipFor(1005)))).toEqual(refused);
    });

    it('applies the same per-account limit to unknown accounts', async () => {
      const t = await open();
      const admin = await seedAdmin(t.services);
      const ghost: Creds = { ...admin, username: 'ghost' };
      for (const creds of [wrong(admin), ghost]) {
        for (let i = 0; i < 50; i++) expect((await attempt(t.app, creds, ipFor(i))).status).toBe(401);
        expect(outcome(await attempt(t.app, creds, ipFor(2000)))).toEqual(throttled(1));
      }
    });

    it('exempts an IP only for 30 days after its last successful sign-in', async () => {
      const t = await open();
      const admin = await seedAdmin(t.services);
      const [old, recent] = ['192.0.2.20', '192.0.2.21'];
      expect((await attempt(t.app, admin, old)).status).toBe(200);
      t.clock.advance(29 * DAY);
      expect((await attempt(t.app, admin, recent)).status).toBe(200);
      t.clock.advance(2 * DAY);
      for (let i = 0; i < 50; i++) expect((await attempt(t.app, wrong(admin), ipFor(i))).status).toBe(401);
      expect(outcome(await attempt(t.app, admin, old)), 'signed in 31 days ago').toEqual(throttled(1));
      expect((await attempt(t.app, admin, recent)).status, 'signed in 2 days ago').toBe(200);
    });

    it('lets the real admin in at once after 200 attempts from rotating attacker IPs', async () => {
      const t = await open();
      const admin = await seedAdmin(t.services);
      const home = '192.0.2.50';
      expect((await attempt(t.app, admin, home)).status).toBe(200);
      const statuses: number[] = [];
      for (let i = 0; i < 200; i++) {
        // One new IP per attempt (layers 1 and 3 never apply), 30 s apart (about 100 minutes).
        const answer = await attempt(t.app, wrong(admin, `guess-${i}`), ipFor(i, '10.66'));
        statuses.push(answer.status);
        if (answer.status === 429) expect(answer.retryAfter).toBeLessThanOrEqual(900);
        t.clock.advance(30);
      }
      const failures = statuses.filter((status) => status === 401).length;
      expect(statuses.slice(0, 50)).toEqual(Array(50).fill(401));
      expect(statuses.filter((status) => status !== 401 && status !== 429)).toEqual([]);
      expect(statuses.filter((status) => status === 429).length, 'the attacker is slowed down').toBeGreaterThan(100);
      expect(failures).toBeLessThan(100);
      expect(outcome(await attempt(t.app, admin, ipFor(500, '10.66'))), 'right password from an unknown IP').toMatchObject({ status: 429 });
      expect((await attempt(t.app, admin, home)).status, 'the real admin from the IP it used before').toBe(200);
    });
  });

  describe('layer 3: per client IP (password spraying)', () => {
    it('throttles an IP after 20 failures on 20 usernames until its 5-minute window ends', async () => {
      const t = await open();
      const admin = await seedAdmin(t.services);
      const sprayer = '203.0.113.99';
      for (let i = 1; i <= 20; i++) {
        expect(outcome(await attempt(t.app, { ...admin, username: `user-${i}`, password: 'Winter2025!' }, sprayer)), `username ${i}`).toEqual(refused);
      }
      expect(outcome(await attempt(t.app, { ...admin, username: 'user-21', password: 'Winter2025!' }, sprayer))).toEqual(throttled(300));
      expect(outcome(await attempt(t.app, admin, sprayer)), 'even a real account with its password').toEqual(throttled(300));
      expect(outcome(await attempt(t.app, { ...admin, username: 'user-21', password: 'Winter2025!' }, '203.0.113.100'))).toEqual(refused);
      t.clock.advance(299);
      expect(outcome(await attempt(t.app, { ...admin, username: 'user-22', password: 'Winter2025!' }, sprayer))).toEqual(throttled(1));
      t.clock.advance(1);
      expect(outcome(await attempt(t.app, { ...admin, username: 'user-22', password: 'Winter2025!' }, sprayer))).toEqual(refused);
      expect((await attempt(t.app, admin, sprayer)).status).toBe(200);
    });

    it('never blocks an admin at an address they signed in from before: one student behind the NAT locks nobody out', async () => {
      const t = await open();
      const admin = await seedAdmin(t.services);
      const nat = '198.51.100.20';
      expect((await attempt(t.app, admin, nat)).status).toBe(200);
      for (let i = 1; i <= 25; i++) await attempt(t.app, { ...admin, username: `made-up-${i}`, password: 'guess' }, nat);
      expect(outcome(await attempt(t.app, { ...admin, username: 'made-up-26', password: 'guess' }, nat))).toMatchObject({ status: 429 });
      expect((await attempt(t.app, admin, nat)).status, 'the admin with the right password').toBe(200);
      expect((await attempt(t.app, wrong(admin), nat)).status, 'a wrong password is still checked and refused').toBe(401);
    });

    it('starts the window at the first failure, not the last', async () => {
      const t = await open();
      const admin = await seedAdmin(t.services);
      const sprayer = '203.0.113.98';
      for (let i = 1; i <= 19; i++) expect((await attempt(t.app, { ...admin, username: `user-${i}` }, sprayer)).status).toBe(401);
      t.clock.advance(200);
      expect((await attempt(t.app, { ...admin, username: 'user-20' }, sprayer)).status).toBe(401);
      expect(outcome(await attempt(t.app, { ...admin, username: 'user-21' }, sprayer))).toEqual(throttled(100));
      t.clock.advance(100);
      expect((await attempt(t.app, { ...admin, username: 'user-21' }, sprayer)).status).toBe(401);
    });
  });

  describe('layer 4: lockout after consecutive failures', () => {
    /**
     * `count` failures from fresh IPs, each after the longest backoff has passed, so layers 1-3
     * never apply: only the consecutive count grows. (Bursting past layer 2 by waiting for its
     * window to restart does not work: consecutive failures keep the backoff, see layer 2 tests.)
     */
    async function failMany(t: TestApp, creds: Creds, count: number, firstIp: number): Promise<number[]> {
      const statuses: number[] = [];
      for (let i = 0; i < count; i++) {
        t.clock.advance(t.config.throttle.maxWait);
        statuses.push((await attempt(t.app, wrong(creds, `g${i}`), ipFor(firstIp + i, '10.88'))).status);
      }
      return statuses;
    }

    it('locks after 100 consecutive failures (default) for every new IP, never for the admin at a known IP, until unlock or a new password', async () => {
      const t = await open();
      expect(t.config.throttle.lockoutFailures).toBe(100);
      const admin = await seedAdmin(t.services);
      const ref = { schoolId: admin.schoolId, username: admin.username };
      const home = '192.0.2.77';
      expect((await attempt(t.app, admin, home)).status).toBe(200);
      expect(await failMany(t, admin, 99, 0)).toEqual(Array(99).fill(401));
      expect(await events(t, 'account.locked')).toEqual([]);
      expect((await failMany(t, admin, 1, 99))[0], 'the 100th failure itself is checked').toBe(401);

      const verify = vi.spyOn(t.services.hasher, 'verify');
      const newIp = ipFor(9000, '10.88');
      expect(outcome(await attempt(t.app, admin, newIp)), 'right password, new IP').toEqual(throttled(900));
      t.clock.advance(900);
      expect(outcome(await attempt(t.app, admin, newIp)), 'after Retry-After').toEqual(throttled(900));
      t.clock.advance(7 * DAY);
      expect(outcome(await attempt(t.app, admin, newIp)), 'a week later').toEqual(throttled(900));
      expect(verify).not.toHaveBeenCalled();

      const locked = await events(t, 'account.locked');
      expect(locked).toHaveLength(1);
      expect(locked[0]).toMatchObject({ school_id: 'lincoln-high', username: admin.username, ip: ipFor(99, '10.88') });
      expect(typeof locked[0]!.admin_id).toBe('string');

      await unlockAdmin(t.services, ref);
      expect((await attempt(t.app, admin, newIp)).status, 'after admin unlock').toBe(200);

      // Locked again: the admin at the IP they signed in from is still let in (the lockout stops
      // the attacker, not the admin), a new IP is not; a password change lifts the lock too.
      expect(await failMany(t, admin, 100, 100)).toEqual(Array(100).fill(401));
      expect(outcome(await attempt(t.app, admin, ipFor(9001, '10.88')))).toEqual(throttled(900));
      expect(await events(t, 'account.locked')).toHaveLength(2);
      expect((await attempt(t.app, admin, home)).status, 'right password, known IP').toBe(200);
      expect(await failMany(t, admin, 100, 200)).toEqual(Array(100).fill(401));
      expect(outcome(await attempt(t.app, admin, ipFor(9002, '10.88')))).toEqual(throttled(900));
      const newPassword = 'a completely new passphrase';
      await changePassword(t.services, ref, newPassword);
      expect(outcome(await attempt(t.app, admin, home)), 'old password after the change').toEqual(refused);
      expect((await attempt(t.app, { ...admin, password: newPassword }, home)).status).toBe(200);
    });

    it('(LOCKOUT_FAILURES=10) counts only consecutive failures, and locks unknown accounts the same way', async () => {
      const t = await open({ LOCKOUT_FAILURES: '10' });
      const admin = await seedAdmin(t.services);
      const home = '192.0.2.78';
      expect(await failMany(t, admin, 9, 0)).toEqual(Array(9).fill(401));
      expect((await attempt(t.app, admin, home)).status, 'a success in between').toBe(200);
      expect(await failMany(t, admin, 9, 100)).toEqual(Array(9).fill(401));
      expect((await attempt(t.app, wrong(admin), ipFor(200, '10.88'))).status, '10th consecutive').toBe(401);
      expect(outcome(await attempt(t.app, admin, ipFor(201, '10.88'))), 'locked for a new IP').toEqual(throttled(900));

      const ghost: Creds = { ...admin, username: 'ghost' };
      expect(await failMany(t, ghost, 10, 300)).toEqual(Array(10).fill(401));
      expect(outcome(await attempt(t.app, ghost, ipFor(301, '10.88')))).toEqual(throttled(900));
      const locked = await events(t, 'account.locked');
      expect(locked.map((event) => event.username)).toEqual([admin.username, 'ghost']);

      await changePassword(t.services, { schoolId: admin.schoolId, username: admin.username }, 'another brand new passphrase');
      expect((await attempt(t.app, { ...admin, password: 'another brand new passphrase' }, home)).status).toBe(200);
    });
  });

  it('never counts or throttles malformed bodies', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const ip = '203.0.113.50';
    const school = JSON.stringify(admin.schoolId);
    const user = JSON.stringify(admin.username);
    const malformed: [string, string | undefined][] = [
      [`{"school_id":${school},"username":${user}}`, 'application/json'],
      [`{"school_id":${school},"username":${user},"password":1}`, 'application/json'],
      [`{"school_id":${school},"username":${user},"password":null}`, 'application/json'],
      [`{"school_id":${school},"username":${user},"password":"${'x'.repeat(1025)}"}`, 'application/json'],
      [`{"school_id":${school},"username":${user},"password":"wrong"`, 'application/json'],
      [`{"school_id":${school},"username":${user},"password":"wrong"}`, 'text/plain'],
      [`{"school_id":${school},"username":${user},"password":"wrong"}`, undefined],
      ['', 'application/json'],
      ['[]', 'application/json'],
      ['NaN', 'application/json'],
    ];
    const send = (body: string, contentType: string | undefined) =>
      t.app.inject({ method: 'POST', url: LOGIN, remoteAddress: ip, payload: body, headers: contentType === undefined ? {} : { 'content-type': contentType } });
    for (let i = 0; i < 50; i++) {
      const [body, contentType] = malformed[i % malformed.length]!;
      expect((await send(body, contentType)).statusCode, `${contentType ?? 'no type'}: ${body.slice(0, 80)}`).toBe(422);
    }
    expect(await countRows(t, 'throttle_counters')).toBe(0);
    for (let i = 1; i <= 5; i++) expect(outcome(await attempt(t.app, wrong(admin), ip)), `wrong password ${i}`).toEqual(refused);
    expect(outcome(await attempt(t.app, wrong(admin), ip))).toEqual(throttled(1));
    // Throttled or not, a malformed body is a 422.
    expect((await send(malformed[0]![0], 'application/json')).statusCode).toBe(422);
  });

  it('LOGIN_THROTTLE=off disables every layer', async () => {
    const t = await open({ LOGIN_THROTTLE: 'off' });
    const admin = await seedAdmin(t.services);
    const ip = '203.0.113.60';
    const statuses: number[] = [];
    // 105 consecutive failures from one IP (layers 1, 2, 4), then 25 usernames from it (layer 3).
    for (let i = 0; i < 105; i++) statuses.push((await attempt(t.app, wrong(admin), ip)).status);
    for (let i = 0; i < 25; i++) statuses.push((await attempt(t.app, { ...admin, username: `user-${i}` }, ip)).status);
    expect(statuses).toEqual(Array(130).fill(401));
    expect((await attempt(t.app, admin, ip)).status).toBe(200);
    expect(await countRows(t, 'throttle_counters')).toBe(0);
    expect(await events(t, 'login.throttled')).toEqual([]);
    expect(await events(t, 'account.locked')).toEqual([]);
  });
});
