import type { Db } from '../../db/database.js';
import { checkpointAt } from '../../db/queries/audit-reading.js';
import { supersedeCheckpoint, type SealerState } from '../../db/queries/audit-sealing.js';
import { checkCheckpointSignature, rowMatchesClaims, type CheckpointClaims, type CheckpointSigner, type SealedCheckpoint } from './checkpoint-signature.js';
import { WRITE_SETTLE_MS, batchAt, heartbeatDue } from './checkpoint-timeline.js';

/** The `sealed_at` of checkpoint `seq` as stored now; 0 before the first. */
async function sealedAtOf(db: Db, seq: number): Promise<number> {
  if (seq === 0) return 0;
  return (await checkpointAt(db, seq))?.sealed_at ?? 0;
}

/**
 * The heartbeat: when nothing waits to be sealed and a round would otherwise leave the newest
 * checkpoint older than a minute, signs it again in place, over the same events, with a fresh
 * `sealed_at` and `covers_before`. The promise of completeness keeps up with the clock, and an
 * idle stretch adds no row. Runs in the sealing round's transaction, after the sealer row's claim.
 * Undefined when not due or when there is nothing it may sign again.
 */
export async function resignNewest(trx: Db, signer: CheckpointSigner, head: SealerState, now: number, nextRoundMs: number): Promise<SealedCheckpoint | undefined> {
  // Events sealed past the newest checkpoint only come from a hand-made row: verify names them.
  if (head.checkpoint_seq === 0 || head.seq !== head.checkpoint_seq) return undefined;
  const row = await checkpointAt(trx, head.checkpoint_seq);
  if (row === undefined || !heartbeatDue(row.sealed_at, now, nextRoundMs)) return undefined;
  const found = await checkCheckpointSignature(trx, row.jws, row.kid);
  // Signing a row that does not hold again would erase what verify names: it stays as it is.
  if (!found.valid || !rowMatchesClaims(row, found.claims) || row.hash !== head.hash) return undefined;
  const claims: CheckpointClaims = {
    seq: row.seq,
    hash: row.hash,
    sealed_at: now,
    // Nothing waits, so only writes still in flight can be missing; an earlier promise still holds.
    covers_before: Math.max(now - WRITE_SETTLE_MS, row.covers_before),
    previous: row.previous,
    batch_at: batchAt(found.claims),
    previous_at: found.claims.previous_at ?? (await sealedAtOf(trx, row.previous)),
    stalled: found.claims.stalled ?? null,
  };
  const signed = await signer.sign(claims);
  if (!(await supersedeCheckpoint(trx, row.seq, row.jws, { ...claims, kid: signed.kid, jws: signed.jws }))) {
    throw new Error(`checkpoint seq ${row.seq} changed while it was signed again`);
  }
  return { ...claims, ...signed, events: 0 };
}
