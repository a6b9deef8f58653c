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

/** An address's failures, all accounts and both ways of signing in together. */
function addressRule(settings: ThrottleConfig, ip: string, knownIp: boolean): CounterRule {
  return {
    key: keys('', ip).ip,
    account: null,
    window: settings.ipWindow,
    // Other people's failures at a shared address (a school's NAT) never block an admin who
    // signed in from it before; a first-time account at that address waits for the window.
    enforce: !knownIp,
    // A fixed window: past the limit, the address waits for the window to end.
    backoff: { count: 'failures', waits: [...new Array<number>(settings.ipFailures).fill(0), settings.ipWindow], from: 'window-start' },
  };
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
    addressRule(settings, ip, knownIp),
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

/** A passkey (its factor id: ours, never what a client sent) and the account (accountOf) of its admin. */
export interface PasskeyCredential {
  readonly id: string;
  readonly account: string;
}

export function passkeyKeys(credential: PasskeyCredential, ip: string) {
  return { credentialIp: digest('passkey-ip', credential.id, ip) };
}

/**
 * The counters of a passkey sign-in: the login's per-address one, shared with passwords at the
 * same limits, that an address the admin signed in from before does not obey; and, for a
 * credential of ours, per (credential, address) like a password's per (account, address). No
 * counter spans addresses or locks: an assertion cannot be guessed, so throttling only bounds the
 * work and writes one address can cause, and a stranger's failures never keep the admin out.
 */
export function passkeyCounterRules(settings: ThrottleConfig, credential: PasskeyCredential | undefined, ip: string, knownIp: boolean): CounterRule[] {
  const address = addressRule(settings, ip, knownIp);
  if (credential === undefined) return [address];
  return [
    {
      key: passkeyKeys(credential, ip).credentialIp,
      account: credential.account,
      window: settings.accountIpWindow,
      enforce: true,
      backoff: { count: 'failures', waits: exponentialWaits(settings.accountIpFreeFailures, settings.maxWait), from: 'now' },
    },
    address,
  ];
}
