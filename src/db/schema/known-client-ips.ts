/** Client IPs from which an account signed in successfully: exempt from the per-account backoff. */
export interface KnownClientIpsTable {
  account: string;
  ip: string;
  last_success_at: number;
}
