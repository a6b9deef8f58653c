import type { Generated } from 'kysely';

/**
 * A second factor of an admin. `secret` is the TOTP key, sealed under KEY_ENCRYPTION_KEY_FILE when
 * one is configured; it is never logged nor answered after enrollment. `last_used_step` is the
 * last accepted TOTP time step: only a greater one is accepted, so each code works once.
 * A WebAuthn factor has no secret (empty) and the `credential_id` … `device_type` columns instead.
 */
export interface MfaFactorsTable {
  id: string;
  admin_id: string;
  /** `totp` or `webauthn`. */
  type: string;
  name: string;
  secret: string;
  /** Null until the admin proved the factor works with a first code. */
  confirmed_at: number | null;
  created_at: number;
  last_used_at: number | null;
  last_used_step: number | null;
  /** The client address of the request that enrolled the factor; null before it was recorded. */
  enrolled_ip: Generated<string | null>;
  /** WebAuthn: the credential id and COSE public key, base64url. */
  credential_id: Generated<string | null>;
  public_key: Generated<string | null>;
  /** WebAuthn: the authenticator's signature counter; 0 for authenticators that keep none. */
  sign_count: Generated<number | null>;
  /** WebAuthn: comma-separated transports the browser reported (usb, nfc, ble, internal, hybrid). */
  transports: Generated<string | null>;
  /** WebAuthn: `singleDevice` (bound to one authenticator) or `multiDevice` (a synced passkey). */
  device_type: Generated<string | null>;
  /** WebAuthn: 1 discoverable (it can sign in alone), 0 not, null unknown (the browser did not say). */
  discoverable: Generated<number | null>;
}
