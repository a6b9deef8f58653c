import type { Generated } from 'kysely';

/** A signed-in session: one per login, ended by expiry or revocation. Times in epoch seconds. */
export interface SessionsTable {
  id: string;
  admin_id: string;
  created_at: number;
  last_used_at: number;
  expires_at: number;
  revoked_at: number | null;
  revoke_reason: string | null;
  /** The feed's order: given by the database in the statement that ended the session (see revocation_sequence). */
  revocation_seq: number | null;
  ip: string | null;
  user_agent: string | null;
  /** The admin's credential_epoch when the session began: alive only while they are equal. */
  credential_epoch: Generated<number>;
  /** Assurance the session was signed in with (`aal1`/`aal2`), kept by every refresh. */
  acr: Generated<string>;
  /** RFC 8176 methods, space-separated (`pwd otp mfa`). */
  amr: Generated<string>;
  /** When the session last presented a second factor (RFC 9470 `auth_time`); null for aal1. */
  auth_time: Generated<number | null>;
  /** The IdP identity and IdP session of a session signed in through single sign-on; null otherwise. */
  sso_issuer: Generated<string | null>;
  sso_subject: Generated<string | null>;
  sso_session: Generated<string | null>;
}
