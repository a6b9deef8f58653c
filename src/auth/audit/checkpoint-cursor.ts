import type { Db } from '../../db/database.js';
import { checkpointsPage } from '../../db/queries/audit-reading.js';
import type { CheckpointRow } from '../../db/queries/audit-sealing.js';
import { checkCheckpointSignature, rowMatchesClaims, type CheckpointClaims } from './checkpoint-signature.js';
import { AuditProblem } from './audit-problem.js';
import { timelineProblem } from './checkpoint-timeline.js';

const PAGE = 500;

/** A stored checkpoint whose signature, row and place in the chain have been checked. */
interface CheckedCheckpoint {
  readonly row: CheckpointRow;
  readonly claims: CheckpointClaims;
  readonly withdrawnLater: boolean;
}

/**
 * Walks the stored checkpoints in seq order, a page at a time, checking each as it comes: its
 * signature, that its row says what was signed, that it names the checkpoint before it (so a
 * deleted checkpoint shows) and the version of it that it followed, and that no gap while the
 * service ran preceded it. Throws AuditProblem at the first that fails.
 */
export class CheckpointCursor {
  private page: CheckpointRow[] = [];
  private next: CheckedCheckpoint | undefined;
  private last: CheckpointRow | undefined;
  private exhausted = false;
  /** Checkpoints passed so far, the last one's seq, the latest promise of completeness. */
  checked = 0;
  lastSeq = 0;
  coversBefore = Number.NEGATIVE_INFINITY;
  withdrawnLater = 0;

  constructor(private readonly db: Db) {}

  /** The seq of the next checkpoint, not yet checked; undefined after the last. */
  async peekSeq(): Promise<number | undefined> {
    if (this.page.length === 0 && !this.exhausted) {
      this.page = await checkpointsPage(this.db, this.last?.seq ?? 0, PAGE);
      this.exhausted = this.page.length < PAGE;
    }
    return this.page[0]?.seq;
  }

  /** The next checkpoint, checked, without taking it; undefined after the last. */
  async peek(): Promise<CheckedCheckpoint | undefined> {
    if (this.next !== undefined) return this.next;
    await this.peekSeq();
    const row = this.page[0];
    if (row === undefined) return undefined;
    this.next = await this.check(row);
    return this.next;
  }

  /** Takes the next checkpoint, checked. */
  async take(): Promise<CheckedCheckpoint> {
    const next = await this.peek();
    if (next === undefined) throw new TypeError('take() past the last checkpoint');
    this.page.shift();
    this.next = undefined;
    this.last = next.row;
    if (next.withdrawnLater) this.withdrawnLater += 1;
    this.checked += 1;
    this.lastSeq = next.row.seq;
    this.coversBefore = Math.max(this.coversBefore, next.row.covers_before);
    return next;
  }

  private async check(row: CheckpointRow): Promise<CheckedCheckpoint> {
    const signature = await checkCheckpointSignature(this.db, row.jws, row.kid);
    if (!signature.valid) throw new AuditProblem(`checkpoint seq ${row.seq}: ${signature.problem}`);
    if (!rowMatchesClaims(row, signature.claims)) throw new AuditProblem(`checkpoint seq ${row.seq} was edited: its row differs from what its signature covers`);
    if (row.previous > this.lastSeq) throw new AuditProblem(`checkpoint seq ${row.previous} was deleted: checkpoint seq ${row.seq} was signed after it`);
    if (row.previous < this.lastSeq) throw new AuditProblem(`checkpoint seq ${this.lastSeq} was inserted: checkpoint seq ${row.seq} was signed right after checkpoint seq ${row.previous}`);
    const problem = timelineProblem(this.last, row, signature.claims);
    if (problem !== undefined) throw new AuditProblem(problem);
    return { row, claims: signature.claims, withdrawnLater: signature.withdrawnLater };
  }
}
