/**
 * The outstanding WebAuthn registration of an admin: the challenge the registration options
 * carried, accepted once and until `expires_at`. One per admin: new options replace it.
 */
export interface WebauthnRegistrationsTable {
  admin_id: string;
  challenge: string;
  expires_at: number;
}
