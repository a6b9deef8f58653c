import type { Clock } from '../clock.js';
import { nowSeconds } from '../clock.js';
import type { ThrottleConfig } from '../config.js';
import type { Db } from '../db/database.js';
import {
  countFailure,
  deleteAccountCounters,
  deleteCounters,
  findCounters,
  isKnownClientIp,
  rememberClientIp,
  type ThrottleCounter,
} from '../db/queries/throttle.js';

type Deps = { readonly db: Db; readonly clock: Clock; readonly config: { readonly throttle: ThrottleConfig } };

/**
 * The account a login attempt is for, whether or not it exists: unknown accounts are counted and
 * throttled exactly like real ones, so a 429 tells an attacker nothing.
 */
export function accountOf(schoolKey: string, usernameKey: string): string {
  return JSON.stringify([schoolKey, usernameKey]);
}

function keys(account: string, ip: string) {
  return { accountIp: `account-ip:${account}:${ip}`, account: `account:${account}`, ip: `ip:${ip}` };
}

/** 2^(n - free) seconds once `free` failures are used up, capped: 0 while still free. */
export function backoffSeconds(failures: number, free: number, cap: number): number {
  if (failures < free) return 0;
  return Math.min(2 ** Math.min(failures - free, 30), cap);
}

function inWindow(counter: ThrottleCounter | undefined, window: number, now: number): number {
  if (counter === undefined || counter.window_start <= now - window) return 0;
  return counter.failures;
}

function remainingWait(counter: ThrottleCounter | undefined, wait: number, now: number): number {
  if (counter === undefined || wait === 0) return 0;
  return Math.max(0, counter.last_failure_at + wait - now);
}

/**
 * Seconds the client must wait before this attempt may be checked, or 0 when it may go ahead.
 * Decided before any hashing, so throttled attempts cost no argon2id work.
 */
export async function loginWaitSeconds(deps: Deps, account: string, ip: string): Promise<number> {
  const settings = deps.config.throttle;
  if (!settings.enabled) return 0;
  const now = nowSeconds(deps.clock);
  const names = keys(account, ip);
  const rows = await findCounters(deps.db, [names.accountIp, names.account, names.ip]);
  const byKey = new Map(rows.map((row) => [row.key, row]));
  const accountRow = byKey.get(names.account);
  const ipRow = byKey.get(names.ip);
  const accountIpRow = byKey.get(names.accountIp);

  if (accountRow !== undefined && accountRow.consecutive >= settings.lockoutFailures) return settings.maxWait;
  const waits = [remainingWait(accountIpRow, backoffSeconds(inWindow(accountIpRow, settings.accountIpWindow, now), settings.accountIpFreeFailures, settings.maxWait), now)];
  if (inWindow(ipRow, settings.ipWindow, now) >= settings.ipFailures && ipRow !== undefined) {
    waits.push(ipRow.window_start + settings.ipWindow - now);
  }
  const accountWait = backoffSeconds(inWindow(accountRow, settings.accountWindow, now), settings.accountFailures, settings.maxWait);
  if (accountWait > 0) {
    // The per-account layer spares IPs that signed in to this account before: an attacker's
    // failures elsewhere cannot lock the real administrator out.
    const known = await isKnownClientIp(deps.db, account, ip, now - settings.knownIpDays * 86_400);
    if (!known) waits.push(remainingWait(accountRow, accountWait, now));
  }
  return Math.max(...waits);
}

/** Counts a refused login in every layer; returns true when this failure locked the account. */
export async function recordLoginFailure(deps: Deps, account: string, ip: string): Promise<boolean> {
  const settings = deps.config.throttle;
  if (!settings.enabled) return false;
  const now = nowSeconds(deps.clock);
  const names = keys(account, ip);
  await countFailure(deps.db, { key: names.accountIp, account, window: settings.accountIpWindow }, now);
  await countFailure(deps.db, { key: names.ip, account: null, window: settings.ipWindow }, now);
  const consecutive = await countFailure(deps.db, { key: names.account, account, window: settings.accountWindow }, now);
  return consecutive === settings.lockoutFailures;
}

/** A success resets the account's counters for this IP and across IPs, and remembers the IP. */
export async function recordLoginSuccess(deps: Deps, account: string, ip: string): Promise<void> {
  if (!deps.config.throttle.enabled) return;
  const names = keys(account, ip);
  await deleteCounters(deps.db, [names.accountIp, names.account]);
  await rememberClientIp(deps.db, account, ip, nowSeconds(deps.clock));
}

/** Lifts a lockout (and every backoff) of one account. */
export function unlockAccount(db: Db, account: string): Promise<number> {
  return deleteAccountCounters(db, account);
}
