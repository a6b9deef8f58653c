/**
 * A refresh token, stored only as its SHA-256. With rotation, a consumed token keeps its successor
 * sealed under a key derived from the consumed token itself, so only its holder can read it back
 * during the grace window.
 */
export interface RefreshTokensTable {
  token_hash: string;
  session_id: string;
  created_at: number;
  consumed_at: number | null;
  successor_sealed: string | null;
}
