/** Digests of consumed `state` values, kept until the state would have expired anyway. */
export interface SsoUsedStatesTable {
  state_hash: string;
  expires_at: number;
}
