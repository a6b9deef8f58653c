import type { Db } from '../../db/database.js';
import { checkpointsPage } from '../../db/queries/audit-reading.js';
import type { CheckpointRow } from '../../db/queries/audit-sealing.js';
import { checkCheckpointSignature, rowMatchesClaims } from './checkpoint-signature.js';
import { AuditProblem } from './audit-problem.js';

const PAGE = 500;

/**
 * Walks the stored checkpoints in seq order, a page at a time, checking each as it comes: its
 * signature, that its row says what was signed, and that it names the checkpoint before it (so a
 * deleted checkpoint shows). Throws AuditProblem at the first that fails.
 */
export class CheckpointCursor {
  private page: CheckpointRow[] = [];
  private afterSeq = 0;
  private exhausted = false;
  /** Checkpoints passed so far, the last one's seq, the latest promise of completeness. */
  checked = 0;
  lastSeq = 0;
  coversBefore = Number.NEGATIVE_INFINITY;
  withdrawnLater = 0;

  constructor(private readonly db: Db) {}

  /** The next checkpoint without taking it; undefined after the last. */
  async peek(): Promise<CheckpointRow | undefined> {
    if (this.page.length === 0 && !this.exhausted) {
      this.page = await checkpointsPage(this.db, this.afterSeq, PAGE);
      this.exhausted = this.page.length < PAGE;
    }
    return this.page[0];
  }

  /** Takes the next checkpoint, verified. */
  async take(): Promise<CheckpointRow> {
    const row = await this.peek();
    if (row === undefined) throw new TypeError('take() past the last checkpoint');
    this.page.shift();
    this.afterSeq = row.seq;
    const signature = await checkCheckpointSignature(this.db, row.jws, row.kid);
    if (!signature.valid) throw new AuditProblem(`checkpoint seq ${row.seq}: ${signature.problem}`);
    if (!rowMatchesClaims(row, signature.claims)) throw new AuditProblem(`checkpoint seq ${row.seq} was edited: its row differs from what its signature covers`);
    if (row.previous > this.lastSeq) throw new AuditProblem(`checkpoint seq ${row.previous} was deleted: checkpoint seq ${row.seq} was signed after it`);
    if (row.previous < this.lastSeq) throw new AuditProblem(`checkpoint seq ${this.lastSeq} was inserted: checkpoint seq ${row.seq} was signed right after checkpoint seq ${row.previous}`);
    if (signature.withdrawnLater) this.withdrawnLater += 1;
    this.checked += 1;
    this.lastSeq = row.seq;
    this.coversBefore = Math.max(this.coversBefore, row.covers_before);
    return row;
  }
}
