import { nowSeconds, type Clock } from '../../runtime/clock.js';
import type { Db } from '../../db/database.js';
import { deleteCounters, reserveAttempt, type CounterRule } from '../../db/queries/throttle.js';
import { digest } from './throttle-rules.js';

const WINDOW = 900;

/** Past `limit` attempts in a 15-minute window, the scope waits for the window's end. */
function fixedWindow(key: string, account: string | null, limit: number): CounterRule {
  return { key, account, window: WINDOW, enforce: true, backoff: { count: 'failures', waits: [...new Array<number>(limit).fill(0), WINDOW], from: 'window-start' } };
}

/**
 * The scopes a recovery code's guess counts in: per (account, client address), 5 in 15 minutes,
 * and per client address, 20. Nothing counts per account alone: guesses from elsewhere can never
 * keep the owner from their own code (which, at 256 bits, no number of guesses finds anyway).
 */
function guessRules(account: string, ip: string): CounterRule[] {
  return [fixedWindow(digest('recovery-guess', account, ip), account, 5), fixedWindow(digest('recovery-guess-ip', ip), null, 20)];
}

/** Counts a guess in each scope unless one refuses it (each decided by one conditional upsert). */
export async function admitRecoveryGuess(deps: { db: Db; clock: Clock }, account: string, ip: string): Promise<boolean> {
  const now = nowSeconds(deps.clock);
  for (const rule of guessRules(account, ip)) {
    if ((await reserveAttempt(deps.db, rule, now)) === undefined) return false;
  }
  return true;
}

/** After a right code: the (account, address) scope starts again. */
export async function forgetRecoveryGuesses(db: Db, account: string, ip: string): Promise<void> {
  await deleteCounters(db, [guessRules(account, ip)[0]?.key ?? '']);
}

/** Requests for codes from one client address: 20 in 15 minutes, whatever accounts they name. */
export async function admitRecoveryRequest(deps: { db: Db; clock: Clock }, ip: string): Promise<boolean> {
  return (await reserveAttempt(deps.db, fixedWindow(digest('recovery-request-ip', ip), null, 20), nowSeconds(deps.clock))) !== undefined;
}
