import type { Clock } from '../../../runtime/clock.js';

/** Requests a second per token and instance, and the burst above it (docs/scim.md). */
export const SCIM_RATE = 200;
export const SCIM_BURST = 400;

/**
 * Requests per SCIM token, per instance: a token bucket refilled at `rate` a second up to `burst`.
 * Sized for a directory's initial sync (Microsoft Entra sends up to 25 a second per tenant; a
 * faster client still syncs 2,000 users in well under a minute); what it stops is a client in a
 * loop, not an attacker, who holds no token.
 */
export class ScimThrottle {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly rate = SCIM_RATE,
    private readonly burst = SCIM_BURST,
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
