import { inTransaction, type Db } from '../../db/database.js';
import { checkpointAt, publicKeyByKid } from '../../db/queries/audit-reading.js';
import { advanceSealer, claimSealer, earliestUnsealedAt, insertCheckpoint, sealEvent, unsealedEvents } from '../../db/queries/audit-sealing.js';
import type { Clock } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import { chainHash, sealedView } from './canonical-event.js';
import { checkpointSigner, type CheckpointClaims, type CheckpointSigner, type SealedCheckpoint } from './checkpoint-signature.js';
import { WRITE_SETTLE_MS, stallEndedAt } from './checkpoint-timeline.js';
import { resignNewest } from './heartbeat.js';

/** Events sealed per transaction: bounds how long one batch holds the sealer row. */
export const SEAL_BATCH_SIZE = 1000;

export interface SealOptions {
  readonly limit?: number;
  /** Fails the batch after sealing this many events (tests: a crash in the middle of a batch). */
  readonly failAfter?: number;
  /** When the calling sealer started (default: now). A gap in checkpoints after it is one it ran through. */
  readonly runningSince?: number;
  /** How soon the caller's next round comes (default 0); the heartbeat is due when that would be too late. */
  readonly nextRoundMs?: number;
}

const KEY_WITHDRAWN = Symbol('the signer key was withdrawn');

/**
 * Seals the oldest unsealed events, in id order, and ends the batch with a signed checkpoint, all
 * in one transaction: a crash anywhere leaves the chain as it was, without gap or duplicate. When
 * nothing waits, signs the newest checkpoint again if its minute is up (resignNewest, events: 0).
 * Undefined when there was nothing to do. The sealer row, claimed first, makes concurrent sealers
 * (other instances) take turns; each continues from the head the previous one committed.
 */
export async function sealBatch(context: Pick<AppContext, 'db' | 'clock' | 'keys'>, options: SealOptions = {}): Promise<SealedCheckpoint | undefined> {
  const signer = await checkpointSigner(context.keys);
  const sealed = await inTransaction(context.db, (trx) => sealRound(trx, context.clock, signer, options));
  if (sealed !== KEY_WITHDRAWN) return sealed;
  // This instance's key cache still holds a key withdrawn meanwhile: the keys are read again, so no
  // checkpoint is signed with a withdrawn key and none is late for it.
  context.keys.reload();
  const renewed = await checkpointSigner(context.keys);
  const retried = await inTransaction(context.db, (trx) => sealRound(trx, context.clock, renewed, options));
  return retried === KEY_WITHDRAWN ? undefined : retried;
}

async function sealRound(trx: Db, clock: Clock, signer: CheckpointSigner, options: SealOptions): Promise<SealedCheckpoint | undefined | typeof KEY_WITHDRAWN> {
  const head = await claimSealer(trx, clock.now());
  // Read after the claim: a round that waited for the sealer row signs the time it got it.
  const now = clock.now();
  if ((await publicKeyByKid(trx, signer.kid))?.revoked_at !== null) return KEY_WITHDRAWN;
  const events = await unsealedEvents(trx, options.limit ?? SEAL_BATCH_SIZE);
  if (events.length === 0) return resignNewest(trx, signer, head, now, options.nextRoundMs ?? 0);
  let { seq, hash } = head;
  for (const event of events) {
    if (options.failAfter !== undefined && seq - head.seq >= options.failAfter) throw new Error('sealing failed in the middle of a batch (injected)');
    seq += 1;
    hash = chainHash(hash, sealedView(event, seq));
    if (!(await sealEvent(trx, event.id, seq, hash))) throw new Error(`event ${event.id} was sealed by another sealer`);
  }
  const stillUnsealed = await earliestUnsealedAt(trx);
  const newestAt = head.checkpoint_seq === 0 ? undefined : (await checkpointAt(trx, head.checkpoint_seq))?.sealed_at;
  const claims: CheckpointClaims = {
    seq,
    hash,
    sealed_at: now,
    covers_before: Math.min(now - WRITE_SETTLE_MS, stillUnsealed ?? Number.POSITIVE_INFINITY),
    previous: head.checkpoint_seq,
    batch_at: now,
    previous_at: newestAt ?? 0,
    stalled: stallEndedAt(newestAt, now, options.runningSince ?? now),
  };
  const signed = await signer.sign(claims);
  await insertCheckpoint(trx, { ...claims, kid: signed.kid, jws: signed.jws });
  await advanceSealer(trx, { seq, hash, checkpointSeq: seq });
  return { ...claims, ...signed, events: events.length };
}
