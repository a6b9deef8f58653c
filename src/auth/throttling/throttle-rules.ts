import { createHash } from 'node:crypto';
import type { ThrottleConfig } from '../../config/config.js';
import type { CounterRule } from '../../db/queries/throttle.js';

/** A fixed-size stored key, whatever an unauthenticated client typed (NFKC can grow a name 18-fold). */
export function digest(...parts: string[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
}

/**
 * The account a login attempt is for, whether or not it exists: unknown accounts are counted and
 * throttled exactly like real ones, so a 429 tells an attacker nothing.
 */
export function accountOf(schoolKey: string, usernameKey: string): string {
  return digest('account', schoolKey, usernameKey);
}

/** The counters of one attempt: per (account, IP), per IP, per account. */
export function keys(account: string, ip: string) {
  return { accountIp: digest('account-ip', account, ip), ip: digest('ip', ip), account: digest('account-counter', account) };
}

/**
 * The waits after each failure: none while `free` failures are unused, then 1, 2, 4... seconds,
 * capped at `cap` (index n is the n-th failure).
 */
function exponentialWaits(free: number, cap: number): number[] {
  const waits = new Array<number>(free).fill(0);
  for (let wait = 1; wait < cap; wait *= 2) waits.push(wait);
  waits.push(cap);
  return waits;
}

/** The three counters one attempt is checked against and counted in, always in this order. */
export function counterRules(settings: ThrottleConfig, account: string, ip: string, knownIp: boolean): CounterRule[] {
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

