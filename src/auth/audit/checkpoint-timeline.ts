import type { CheckpointRow } from '../../db/queries/audit-sealing.js';
import { isoTime } from './audit-problem.js';
import type { CheckpointClaims } from './checkpoint-signature.js';

/**
 * How long an event may take from its timestamp to its commit. A checkpoint promises that events
 * written before `covers_before` are all sealed; that is at most this long before the checkpoint,
 * so a write still in flight is not mistaken for one inserted afterwards.
 */
export const WRITE_SETTLE_MS = 60_000;

/** While the service runs, a checkpoint is signed at least this often, events or not (the heartbeat). */
export const HEARTBEAT_MS = 60_000;

/**
 * A stretch without checkpoints longer than this while a sealer ran is a gap: the heartbeat's
 * minute, a minute of disagreement between the clocks of two instances, and a minute for a slow
 * round or a lock held by another instance's batch.
 */
const CHECKPOINT_GAP_MS = 3 * 60_000;

/**
 * How far an event's time may lie after the checkpoint that sealed it: the clocks of the
 * instances and of the hosts running commands agree within this (docs/audit-trail.md).
 */
export const CLOCK_ALLOWANCE_MS = 60_000;

/** A stretch without checkpoints while the sealer ran, `[from, until]` in epoch ms. */
type Stall = readonly [number, number];

/** When a checkpoint's events were sealed: its first signing (checkpoints from before the heartbeat were never signed again). */
export function batchAt(claims: CheckpointClaims): number {
  return claims.batch_at ?? claims.sealed_at;
}

/**
 * Whether a round at `now` re-signs the newest checkpoint, last signed at `newestAt`: waiting for
 * the next round, `nextRoundMs` away, would leave it older than HEARTBEAT_MS.
 */
export function heartbeatDue(newestAt: number, now: number, nextRoundMs: number): boolean {
  return now - newestAt >= HEARTBEAT_MS - nextRoundMs;
}

/**
 * The gap that a batch sealed at `now` ends, if any: the time since the newest checkpoint was last
 * signed, counted from when this sealer started when that is later (before it, the service may have
 * been down). A gap ended by a batch matters: its events may have been written during the gap,
 * when no checkpoint promised anything. One ended by a re-signing hides nothing, since every event
 * dated in it is then behind the new `covers_before`.
 */
export function stallEndedAt(newestAt: number | undefined, now: number, runningSince: number): Stall | null {
  if (newestAt === undefined) return null;
  const from = Math.max(newestAt, runningSince);
  return now - from > CHECKPOINT_GAP_MS ? [from, now] : null;
}

/**
 * What is wrong with a checkpoint's place in time, given the checkpoint before it (already
 * verified); undefined when it holds. `previous_at` binds the version of the checkpoint before that
 * this one followed: only the newest checkpoint is ever re-signed, so an older version of it put
 * back later shows.
 */
export function timelineProblem(before: CheckpointRow | undefined, row: CheckpointRow, claims: CheckpointClaims): string | undefined {
  if (before !== undefined && claims.previous_at !== undefined && claims.previous_at !== before.sealed_at) {
    return (
      `checkpoint seq ${before.seq} was put back to another version of it: checkpoint seq ${row.seq} was signed after the one ` +
      `sealed at ${isoTime(claims.previous_at)}, the database holds the one sealed at ${isoTime(before.sealed_at)}`
    );
  }
  if (claims.stalled === undefined || claims.stalled === null) return undefined;
  const [from, until] = claims.stalled;
  return `no checkpoint from ${isoTime(from)} to ${isoTime(until)} while the service ran: the events checkpoint seq ${row.seq} sealed after it could have been inserted during it`;
}
