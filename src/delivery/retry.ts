/** How long a message is retried before it becomes a dead letter: at least this long after it was written. */
export const RETRY_WINDOW_MS = 24 * 3600 * 1000;
const FIRST_DELAY_MS = 5_000;
const LONGEST_DELAY_MS = 8 * 3600 * 1000;

export type NextStep = { readonly state: 'pending'; readonly at: number } | { readonly state: 'dead' };

/**
 * After a failed attempt (`attempts` counts it): the next attempt, 5 s after the first failure and
 * four times longer after each one (at most 8 h), stretched by up to a quarter at random so that
 * receivers coming back are not met by every sender at once; or a dead letter, once the message
 * has been tried for RETRY_WINDOW_MS.
 */
export function afterFailure(createdAt: number, attempts: number, now: number, random: () => number = Math.random): NextStep {
  if (now - createdAt >= RETRY_WINDOW_MS) return { state: 'dead' };
  const delay = Math.min(LONGEST_DELAY_MS, FIRST_DELAY_MS * 4 ** Math.max(0, attempts - 1));
  return { state: 'pending', at: now + Math.round(delay * (1 + random() / 4)) };
}
