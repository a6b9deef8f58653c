import type { Generated } from 'kysely';

/**
 * Failed-login counters, one row per throttling scope: per IP, per account or per
 * (account, IP), each keyed by a fixed-size digest. `account` (the canonical school and username) lets an unlock or a
 * password change clear every row of one account. `failures` counts within the window that began
 * at `window_start`; `consecutive` counts failures since the last success (account rows only);
 * no attempt is let through before `blocked_until`.
 */
export interface ThrottleCountersTable {
  key: string;
  account: string | null;
  window_start: number;
  failures: number;
  last_failure_at: number;
  consecutive: number;
  blocked_until: number;
  /** Attempts refused since the last one counted: the block's refusals, aggregated. */
  refused: Generated<number>;
}
