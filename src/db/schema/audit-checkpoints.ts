/**
 * A signed checkpoint of the audit chain: every event up to `seq` chains to `hash`, and every
 * event written before `covers_before` (epoch ms) has a `seq` at most `seq`. `previous` is the
 * checkpoint before it (0 for the first), so a deleted checkpoint shows. `jws` signs exactly
 * `{seq, hash, sealed_at, covers_before, previous}` with the signing key `kid`.
 */
export interface AuditCheckpointsTable {
  seq: number;
  hash: string;
  sealed_at: number;
  covers_before: number;
  previous: number;
  kid: string;
  jws: string;
}
