/**
 * The audit chain's head, one row (`id` 1): the last sealed `seq` and its `hash`, the last
 * checkpoint's `seq`, and the checkpoint `prune` cut the chain at (0: never pruned).
 */
export interface AuditSealerTable {
  id: number;
  seq: number;
  hash: string;
  checkpoint_seq: number;
  pruned_through: number;
  claimed_at: number;
}
