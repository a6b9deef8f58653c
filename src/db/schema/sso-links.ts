/**
 * Which IdP identity signs in as which admin: an email waiting for its first verified sign-in, or
 * the bound `(issuer, subject)`. Once bound, the email no longer matters.
 */
export interface SsoLinksTable {
  admin_id: string;
  school_key: string;
  /** Lowercased; null once bound or when linked by subject. */
  email: string | null;
  issuer: string | null;
  subject: string | null;
  created_at: number;
  linked_at: number | null;
}
