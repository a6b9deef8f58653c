/** A single-use recovery code, stored only as its SHA-256 digest. */
export interface MfaRecoveryCodesTable {
  code_hash: string;
  admin_id: string;
  created_at: number;
  used_at: number | null;
}
