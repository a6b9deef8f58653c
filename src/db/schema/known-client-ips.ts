/**
 * Client IPs from which an account signed in successfully: exempt from the per-account backoff
 * within THROTTLE_KNOWN_IP_DAYS, and what makes a sign-in's address new (to be told) for a year.
 */
export interface KnownClientIpsTable {
  account: string;
  ip: string;
  last_success_at: number;
}
