/** A one-minute, single-use code the front end exchanges for tokens; only its SHA-256 digest is kept. */
export interface SsoLoginCodesTable {
  code_hash: string;
  admin_id: string;
  /** The front end's PKCE S256 challenge: only the holder of the verifier can exchange the code. */
  code_challenge: string;
  credential_epoch: number;
  /** 1 when the school trusts the IdP's MFA and the ID token's `amr` shows one. */
  idp_mfa: number;
  issuer: string;
  subject: string;
  /** The ID token's `sid`, for back-channel logout. */
  idp_session: string | null;
  expires_at: number;
  used_at: number | null;
}
