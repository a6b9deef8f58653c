/** Time source, injected everywhere a rule depends on time so tests can move it without sleeping. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Whole seconds since the epoch, the unit of every stored timestamp and token claim. */
export function nowSeconds(clock: Clock): number {
  return Math.floor(clock.now() / 1000);
}
