import { inTransaction } from '../../db/database.js';
import { publicKeyByKid } from '../../db/queries/audit-reading.js';
import {
  advanceSealer,
  claimSealer,
  earliestUnsealedAt,
  insertCheckpoint,
  sealEvent,
  unsealedEvents,
} from '../../db/queries/audit-sealing.js';
import type { AppContext } from '../context.js';
import { chainHash, sealedView } from './canonical-event.js';
import { checkpointSigner, type CheckpointClaims, type SignedCheckpoint } from './checkpoint-signature.js';

/** Events sealed per transaction: bounds how long one batch holds the sealer row. */
export const SEAL_BATCH_SIZE = 1000;

/**
 * How long an event may take from its timestamp to its commit. A checkpoint promises that events
 * written before `covers_before` are all sealed; that is at most this long before the checkpoint,
 * so a write still in flight is not mistaken for one inserted afterwards.
 */
export const WRITE_SETTLE_MS = 60_000;

export type SealedCheckpoint = CheckpointClaims & SignedCheckpoint & { readonly events: number };

export interface SealOptions {
  readonly limit?: number;
  /** Fails the batch after sealing this many events (tests: a crash in the middle of a batch). */
  readonly failAfter?: number;
}

/**
 * Seals the oldest unsealed events, in id order, and ends the batch with a signed checkpoint, all
 * in one transaction: a crash anywhere leaves the chain as it was, without gap or duplicate.
 * Undefined when nothing was waiting. The sealer row, claimed first, makes concurrent sealers
 * (other instances) take turns; each continues from the head the previous one committed.
 */
export async function sealBatch(context: Pick<AppContext, 'db' | 'clock' | 'keys'>, options: SealOptions = {}): Promise<SealedCheckpoint | undefined> {
  const signer = await checkpointSigner(context.keys);
  return inTransaction(context.db, async (trx) => {
    const now = context.clock.now();
    const head = await claimSealer(trx, now);
    // An instance's key cache may still hold a key withdrawn meanwhile (for KEY_CACHE_SECONDS):
    // it waits for the new key, so no checkpoint is signed with a key already withdrawn.
    if ((await publicKeyByKid(trx, signer.kid))?.revoked_at !== null) return undefined;
    const events = await unsealedEvents(trx, options.limit ?? SEAL_BATCH_SIZE);
    if (events.length === 0) return undefined;
    let { seq, hash } = head;
    for (const event of events) {
      if (options.failAfter !== undefined && seq - head.seq >= options.failAfter) throw new Error('sealing failed in the middle of a batch (injected)');
      seq += 1;
      hash = chainHash(hash, sealedView(event, seq));
      if (!(await sealEvent(trx, event.id, seq, hash))) throw new Error(`event ${event.id} was sealed by another sealer`);
    }
    const stillUnsealed = await earliestUnsealedAt(trx);
    const claims: CheckpointClaims = {
      seq,
      hash,
      sealed_at: now,
      covers_before: Math.min(now - WRITE_SETTLE_MS, stillUnsealed ?? Number.POSITIVE_INFINITY),
      previous: head.checkpoint_seq,
    };
    const signed = await signer.sign(claims);
    await insertCheckpoint(trx, { ...claims, kid: signed.kid, jws: signed.jws });
    await advanceSealer(trx, { seq, hash, checkpointSeq: seq });
    return { ...claims, ...signed, events: events.length };
  });
}
