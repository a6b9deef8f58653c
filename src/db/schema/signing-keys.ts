/**
 * A JWT signing key pair. It signs from `active_from` until a newer key becomes active, unless it
 * was revoked: from `revoked_at` on it neither signs nor verifies.
 */
export interface SigningKeysTable {
  kid: string;
  alg: string;
  private_jwk: string;
  public_jwk: string;
  created_at: number;
  active_from: number;
  revoked_at: number | null;
}
