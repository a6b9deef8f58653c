/**
 * A second factor of an admin. `secret` is the TOTP key, sealed under KEY_ENCRYPTION_KEY_FILE when
 * one is configured; it is never logged nor answered after enrollment. `last_used_step` is the
 * last accepted TOTP time step: only a greater one is accepted, so each code works once.
 */
export interface MfaFactorsTable {
  id: string;
  admin_id: string;
  /** `totp` now; `webauthn` later. */
  type: string;
  name: string;
  secret: string;
  /** Null until the admin proved the factor works with a first code. */
  confirmed_at: number | null;
  created_at: number;
  last_used_at: number | null;
  last_used_step: number | null;
}
