/** A school's SCIM bearer token (migration 017): stored as its SHA-256 digest, shown once. */
export interface ScimTokensTable {
  id: string;
  school_key: string;
  token_hash: string;
  label: string | null;
  created_at: number;
  last_used_at: number | null;
}
