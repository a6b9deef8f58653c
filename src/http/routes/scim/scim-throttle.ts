import type { Clock } from '../../../runtime/clock.js';

/**
 * Requests per SCIM token, per instance: a token bucket refilled at `rate` a second up to `burst`.
 * Sized for a directory's sync (Microsoft Entra sends up to 25 a second per tenant); what it stops
 * is a client in a loop, not an attacker, who holds no token.
 */
export class ScimThrottle {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly rate = 50,
    private readonly burst = 100,
  ) {}

  /** True when the token may make one more request now (and counts it). */
  take(tokenId: string): boolean {
    const now = this.clock.now();
    const bucket = this.buckets.get(tokenId) ?? { tokens: this.burst, at: now };
    const tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.rate);
    const allowed = tokens >= 1;
    this.buckets.set(tokenId, { tokens: allowed ? tokens - 1 : tokens, at: now });
    return allowed;
  }
}
