import type { Clock } from '../../runtime/clock.js';
import { nowSeconds } from '../../runtime/clock.js';
import type { ThrottleConfig } from '../../config/config.js';
import type { Db } from '../../db/database.js';
import { counterRules, keys, passkeyCounterRules, passkeyKeys, type PasskeyCredential } from './throttle-rules.js';
import {
  countRefusal,
  deleteAccountCounters,
  deleteCounters,
  findCounters,
  isKnownClientIp,
  releaseAttempt,
  rememberClientIp,
  reserveAttempt,
  type CounterRule,
} from '../../db/queries/throttle.js';

type Deps = { readonly db: Db; readonly clock: Clock; readonly config: { readonly throttle: ThrottleConfig } };

export type Reservation =
  | { readonly granted: true; readonly consecutive: number }
  /** `firstRefusal`: the first refused attempt of this block, the one the audit trail records. */
  | { readonly granted: false; readonly wait: number; readonly firstRefusal: boolean };

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
  return reserveCounters(deps, counterRules(settings, account, ip, knownIp), now);
}

/**
 * A passkey sign-in's attempt, reserved like a password's before the assertion is checked: in the
 * login's counter of the address, and per (credential, address) when the credential is one of
 * ours (`credential.account` is its admin's).
 */
export async function reservePasskeyAttempt(deps: Deps, credential: PasskeyCredential | undefined, ip: string): Promise<Reservation> {
  const settings = deps.config.throttle;
  if (!settings.enabled) return { granted: true, consecutive: 0 };
  const now = nowSeconds(deps.clock);
  const knownIp = credential !== undefined && (await isKnownClientIp(deps.db, credential.account, ip, now - settings.knownIpDays * 86_400));
  return reserveCounters(deps, passkeyCounterRules(settings, credential, ip, knownIp), now);
}

/** Forgets a passkey's failures at this address once it signed in (startSession settles the address's). */
export async function settlePasskeySuccess(deps: Deps, credential: PasskeyCredential, ip: string): Promise<void> {
  if (!deps.config.throttle.enabled) return;
  await deleteCounters(deps.db, [passkeyKeys(credential, ip).credentialIp]);
}

/** Gives back a passkey attempt that was no failure: never checked, or its session not stored (the database failed). */
export async function releasePasskeyAttempt(deps: Deps, credential: PasskeyCredential | undefined, ip: string): Promise<void> {
  const settings = deps.config.throttle;
  if (!settings.enabled) return;
  if (credential !== undefined) await releaseAttempt(deps.db, passkeyKeys(credential, ip).credentialIp, settings.accountIpFreeFailures);
  await releaseAttempt(deps.db, keys('', ip).ip, settings.ipFailures);
}

async function reserveCounters(deps: Deps, rules: CounterRule[], now: number): Promise<Reservation> {
  const settings = deps.config.throttle;
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
  const { wait, key } = await longestBlock(deps.db, rules, now, settings);
  // Refusals are counted on the blocking counter, not recorded one by one: a throttled request
  // writes no new row, and the audit trail gets one event per block.
  const refused = key === undefined ? 1 : await countRefusal(deps.db, key);
  return { granted: false, wait, firstRefusal: refused <= 1 };
}

/** How long a refused attempt must wait (the latest block among its layers), and which counter blocks it. */
async function longestBlock(db: Db, rules: readonly CounterRule[], now: number, settings: ThrottleConfig) {
  const rows = new Map((await findCounters(db, rules.map((rule) => rule.key))).map((row) => [row.key, row]));
  let longest: { wait: number; key: string | undefined } = { wait: 1, key: undefined };
  for (const rule of rules) {
    const row = rows.get(rule.key);
    if (row === undefined) continue;
    const locked = rule.lockout !== undefined && row.consecutive >= rule.lockout;
    const wait = locked ? settings.maxWait : rule.enforce ? row.blocked_until - now : 0;
    if (wait >= longest.wait) longest = { wait, key: rule.key };
  }
  return longest;
}

/**
 * A success clears the account's counters for this IP and across IPs, and remembers the IP (also
 * with the throttle off: a sign-in from a new address is told to the admin). True when the IP is
 * new to an account that signed in from another before.
 */
export async function settleLoginSuccess(deps: Deps, account: string, ip: string): Promise<boolean> {
  const settings = deps.config.throttle;
  if (settings.enabled) {
    const names = keys(account, ip);
    await deleteCounters(deps.db, [names.accountIp, names.account]);
    await releaseAttempt(deps.db, names.ip, settings.ipFailures);
  }
  return rememberClientIp(deps.db, account, ip, nowSeconds(deps.clock));
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
