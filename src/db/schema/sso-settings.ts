/** A school's OpenID Connect provider (docs/sso.md). Booleans are stored as 0/1 on both databases. */
export interface SsoSettingsTable {
  school_key: string;
  /** `google`, `microsoft`, `clever`, `classlink` or `oidc`. */
  provider: string;
  issuer: string;
  client_id: string;
  /** Sealed (`enc:v1:`) when KEY_ENCRYPTION_KEY_FILE is set; never printed. */
  client_secret: string;
  /** Allowed email domains (Google: allowed `hd`), space-separated; null when not restricted. */
  domains: string | null;
  tenant: string | null;
  district: string | null;
  password_login: number;
  trust_idp_mfa: number;
  updated_at: number;
}
