import type { Db } from '../../db/database.js';
import { firstUnsealedBefore, sealedEventsPage } from '../../db/queries/audit-reading.js';
import { readSealer } from '../../db/queries/audit-sealing.js';
import type { AuditEvent } from '../../db/queries/events.js';
import { AuditProblem, isoTime as when } from './audit-problem.js';
import { GENESIS_HASH, chainHash, sealedView } from './canonical-event.js';
import { CheckpointCursor } from './checkpoint-cursor.js';
import { ErasureCoverage } from './erasure-record.js';
import { CLOCK_ALLOWANCE_MS, batchAt } from './checkpoint-timeline.js';

const PAGE = 1000;

export interface ChainReport {
  readonly events: number;
  readonly checkpoints: number;
  /** Checkpoints signed with a key withdrawn (`keys revoke`) after they were made. */
  readonly withdrawnLater: number;
  /** The checkpoint `prune` cut the chain at (0: never pruned). */
  readonly prunedThrough: number;
}

const named = (event: AuditEvent) => `event seq ${event.seq} (id ${event.id}, ${event.type} at ${when(event.at)})`;

/**
 * Walks the whole chain in one consistent read, a page at a time, and throws AuditProblem naming
 * the first event that was edited, deleted, inserted or reordered, or the first checkpoint whose
 * signature, row or place in time does not hold. An event is an insertion when its time precedes a
 * checkpoint that does not cover it, sealed since or not (that checkpoint promised all earlier
 * events sealed), or lies more than CLOCK_ALLOWANCE_MS after the checkpoint that sealed it.
 */
export async function verifyChain(db: Db): Promise<ChainReport> {
  const sealer = await readSealer(db);
  const checkpoints = new CheckpointCursor(db);
  let previousHash = GENESIS_HASH;
  for (let next = await checkpoints.peekSeq(); next !== undefined && next <= sealer.pruned_through; next = await checkpoints.peekSeq()) {
    previousHash = (await checkpoints.take()).row.hash;
  }
  if (sealer.pruned_through > 0 && checkpoints.lastSeq !== sealer.pruned_through) {
    throw new AuditProblem(`checkpoint seq ${sealer.pruned_through}, where prune cut the chain, is missing`);
  }
  let expected = sealer.pruned_through + 1;
  const erasures = new ErasureCoverage();
  for (let page = await sealedEventsPage(db, { afterSeq: 0 }, PAGE); page.length > 0; page = await sealedEventsPage(db, { afterSeq: expected - 1 }, PAGE)) {
    for (const [index, event] of page.entries()) {
      const seq = event.seq ?? 0;
      if (seq < expected) throw new AuditProblem(`${named(event)} lies before checkpoint seq ${sealer.pruned_through}, where prune cut the chain: inserted`);
      if (seq > expected) throw new AuditProblem(`event seq ${expected} was deleted (the chain jumps to seq ${seq})`);
      erasures.check(event, previousHash);
      // An erased event of the earlier form cannot be hashed again: its stored hash links the chain on.
      const hash = event.erased_at !== null && event.personal_digest === null ? (event.hash ?? '') : chainHash(previousHash, sealedView(event, seq));
      if (hash !== event.hash) {
        // Ids need not follow seqs (on PostgreSQL, inserts commit out of id order), so only a
        // broken hash shows a reordering; the ids then tell it from an edit.
        const next = page[index + 1];
        if (next !== undefined && next.id < event.id) throw new AuditProblem(`${named(event)} was reordered: it was written after the event sealed next`);
        throw new AuditProblem(`${named(event)} was edited: it no longer matches its hash`);
      }
      if (event.at < checkpoints.coversBefore) {
        throw new AuditProblem(`${named(event)} was inserted afterwards: checkpoint seq ${checkpoints.lastSeq} promised every event before ${when(checkpoints.coversBefore)} sealed already`);
      }
      const checkpoint = await checkpoints.peek();
      if (checkpoint !== undefined && event.at > batchAt(checkpoint.claims) + CLOCK_ALLOWANCE_MS) {
        throw new AuditProblem(`${named(event)} is dated after checkpoint seq ${checkpoint.row.seq} sealed it at ${when(batchAt(checkpoint.claims))}: inserted with a time to come`);
      }
      previousHash = hash;
      expected = seq + 1;
      if (checkpoint?.row.seq !== seq) continue;
      await checkpoints.take();
      if (checkpoint.row.hash !== previousHash) throw new AuditProblem(`the events up to checkpoint seq ${seq} were rewritten: their hashes no longer lead to the signed one`);
    }
  }
  erasures.finish(sealer.pruned_through + 1);
  const lastSealed = expected - 1;
  const dangling = await checkpoints.peekSeq();
  if (dangling !== undefined) throw new AuditProblem(`events seq ${lastSealed + 1} to ${dangling} were deleted: checkpoint seq ${dangling} covers them`);
  if (sealer.seq > lastSealed) throw new AuditProblem(`events seq ${lastSealed + 1} to ${sealer.seq} were deleted with their checkpoints: the chain's head is at seq ${sealer.seq}`);
  if (lastSealed > checkpoints.lastSeq) throw new AuditProblem(`event seq ${checkpoints.lastSeq + 1} was inserted: sealed events end at seq ${lastSealed}, the last checkpoint at seq ${checkpoints.lastSeq}`);
  const late = checkpoints.checked === 0 ? undefined : await firstUnsealedBefore(db, checkpoints.coversBefore);
  if (late !== undefined) {
    throw new AuditProblem(`event id ${late.id} (${late.type} at ${when(late.at)}) was inserted afterwards: checkpoint seq ${checkpoints.lastSeq} promised every event before ${when(checkpoints.coversBefore)} sealed already`);
  }
  return { events: lastSealed - sealer.pruned_through, checkpoints: checkpoints.checked, withdrawnLater: checkpoints.withdrawnLater, prunedThrough: sealer.pruned_through };
}
