import type { Generated } from 'kysely';

/**
 * What a right password leaves when a second factor must follow: the `mfa_token`, stored only as
 * its SHA-256 digest, for 300 s, dead after 5 wrong codes or once used.
 */
export interface MfaChallengesTable {
  token_hash: string;
  admin_id: string;
  /** `login` (the admin has a factor) or `enroll` (a `required` school, no factor yet). */
  purpose: string;
  /** The admin's credential epoch when the password was checked: the session starts only at it. */
  credential_epoch: number;
  created_at: number;
  expires_at: number;
  failures: Generated<number>;
  consumed_at: number | null;
  /** The outstanding WebAuthn challenge of this sign-in, if options were asked for; used once. */
  webauthn_challenge: Generated<string | null>;
  /** Set when the sign-in came through an IdP: the session that follows is a federated one. */
  sso_issuer: Generated<string | null>;
  sso_subject: Generated<string | null>;
  sso_session: Generated<string | null>;
}
