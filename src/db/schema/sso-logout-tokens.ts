/** Digests of the `jti` of accepted back-channel logout tokens, per issuer, until they expire. */
export interface SsoLogoutTokensTable {
  issuer: string;
  jti_hash: string;
  expires_at: number;
}
