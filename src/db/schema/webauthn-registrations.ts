/**
 * The outstanding WebAuthn registration of an admin: the challenge the registration options
 * carried, accepted once and until `expires_at`. One per admin: new options replace it.
 */
export interface WebauthnRegistrationsTable {
  admin_id: string;
  challenge: string;
  expires_at: number;
}

/** Digests of passkey sign-in challenges already accepted, kept until they would have expired anyway. */
export interface PasskeyUsedChallengesTable {
  challenge_hash: string;
  expires_at: number;
}
