import type { Clock } from '../clock.js';
import { nowSeconds } from '../clock.js';
import type { ThrottleConfig } from '../config.js';
import type { Db } from '../db/database.js';
import {
  deleteAccountCounters,
  deleteCounters,
  findCounters,
  isKnownClientIp,
  releaseAttempt,
  rememberClientIp,
  reserveAttempt,
  type CounterRule,
} from '../db/queries/throttle.js';

type Deps = { readonly db: Db; readonly clock: Clock; readonly config: { readonly throttle: ThrottleConfig } };

export type Reservation = { readonly granted: true; readonly consecutive: number } | { readonly granted: false; readonly wait: number };

/**
 * The account a login attempt is for, whether or not it exists: unknown accounts are counted and
 * throttled exactly like real ones, so a 429 tells an attacker nothing.
 */
export function accountOf(schoolKey: string, usernameKey: string): string {
  return JSON.stringify([schoolKey, usernameKey]);
}

function keys(account: string, ip: string) {
  return { accountIp: `account-ip:${account}:${ip}`, ip: `ip:${ip}`, account: `account:${account}` };
}

/**
 * The waits after each failure: none while `free` failures are unused, then 1, 2, 4... seconds,
 * capped at `cap` (index n is the n-th failure).
 */
export function exponentialWaits(free: number, cap: number): number[] {
  const waits = new Array<number>(free).fill(0);
  for (let wait = 1; wait < cap; wait *= 2) waits.push(wait);
  waits.push(cap);
  return waits;
}

/** The three counters one attempt is checked against and counted in, always in this order. */
function counterRules(settings: ThrottleConfig, account: string, ip: string, knownIp: boolean): CounterRule[] {
  const names = keys(account, ip);
  return [
    {
      key: names.accountIp,
      account,
      window: settings.accountIpWindow,
      enforce: true,
      backoff: { count: 'failures', waits: exponentialWaits(settings.accountIpFreeFailures, settings.maxWait), from: 'now' },
    },
    {
      key: names.ip,
      account: null,
      window: settings.ipWindow,
      // Other people's failures at a shared address (a school's NAT) never block an admin who
      // signed in from it before; a first-time account at that address waits for the window.
      enforce: !knownIp,
      // A fixed window: past the limit, the address waits for the window to end.
      backoff: { count: 'failures', waits: [...new Array<number>(settings.ipFailures).fill(0), settings.ipWindow], from: 'window-start' },
    },
    {
      key: names.account,
      account,
      window: settings.accountWindow,
      // The per-account layer spares IPs that signed in to this account before: an attacker's
      // failures elsewhere cannot lock the real administrator out.
      enforce: !knownIp,
      // The lockout too stops the attacker, not the admin: it refuses only addresses new to the account.
      lockout: knownIp ? undefined : settings.lockoutFailures,
      // Windowed failures or consecutive ones, whichever is more: a window that restarts cannot
      // be used to burst past the backoff.
      backoff: { count: 'failures-or-consecutive', waits: exponentialWaits(settings.accountFailures, settings.maxWait), from: 'now' },
    },
  ];
}

class Refused extends Error {}

/**
 * Checks an attempt against every layer and counts it as a failure in the same statements,
 * before any hashing; a successful login then gives the count back. Deciding and counting at once
 * means parallel guesses are throttled exactly like sequential ones.
 */
export async function reserveLoginAttempt(deps: Deps, account: string, ip: string): Promise<Reservation> {
  const settings = deps.config.throttle;
  if (!settings.enabled) return { granted: true, consecutive: 0 };
  const now = nowSeconds(deps.clock);
  const knownIp = await isKnownClientIp(deps.db, account, ip, now - settings.knownIpDays * 86_400);
  const rules = counterRules(settings, account, ip, knownIp);
  try {
    return await deps.db.transaction().execute(async (trx) => {
      let consecutive = 0;
      for (const rule of rules) {
        const counted = await reserveAttempt(trx, rule, now);
        if (counted === undefined) throw new Refused();
        if (rule.lockout !== undefined) consecutive = counted.consecutive;
      }
      return { granted: true as const, consecutive };
    });
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
  }
  return { granted: false, wait: await waitSeconds(deps.db, rules, now, settings) };
}

/** How long a refused attempt must wait: the latest block among the layers it is subject to. */
async function waitSeconds(db: Db, rules: readonly CounterRule[], now: number, settings: ThrottleConfig): Promise<number> {
  const rows = new Map((await findCounters(db, rules.map((rule) => rule.key))).map((row) => [row.key, row]));
  const waits = rules.map((rule) => {
    const row = rows.get(rule.key);
    if (row === undefined) return 0;
    if (rule.lockout !== undefined && row.consecutive >= rule.lockout) return settings.maxWait;
    return rule.enforce ? row.blocked_until - now : 0;
  });
  return Math.max(1, ...waits);
}

/** A success clears the account's counters for this IP and across IPs, and remembers the IP. */
export async function settleLoginSuccess(deps: Deps, account: string, ip: string): Promise<void> {
  const settings = deps.config.throttle;
  if (!settings.enabled) return;
  const names = keys(account, ip);
  await deleteCounters(deps.db, [names.accountIp, names.account]);
  await releaseAttempt(deps.db, names.ip, settings.ipFailures);
  await rememberClientIp(deps.db, account, ip, nowSeconds(deps.clock));
}

/** Gives back a reserved attempt that was never checked (the hash queue was full, the database failed). */
export async function releaseLoginAttempt(deps: Deps, account: string, ip: string): Promise<void> {
  const settings = deps.config.throttle;
  if (!settings.enabled) return;
  const names = keys(account, ip);
  await releaseAttempt(deps.db, names.accountIp, settings.accountIpFreeFailures);
  await releaseAttempt(deps.db, names.ip, settings.ipFailures);
  await releaseAttempt(deps.db, names.account, settings.accountFailures);
}

/** Whether the failure counted by this reservation is the one that locked the account. */
export function lockedByThisFailure(reservation: Reservation & { granted: true }, settings: ThrottleConfig): boolean {
  return settings.enabled && reservation.consecutive === settings.lockoutFailures;
}

/** Lifts a lockout (and every backoff) of one account. */
export function unlockAccount(db: Db, account: string): Promise<number> {
  return deleteAccountCounters(db, account);
}
