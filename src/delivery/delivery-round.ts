import type { AppContext } from '../auth/context.js';
import { claimMessage, listDue, settleMessage, type OutboxMessage } from '../db/queries/outbox.js';
import { insertAttempt } from '../db/queries/outbox-attempts.js';
import type { OutboxCounts } from '../runtime/outbox-counts.js';
import { afterFailure } from './retry.js';
import { sendMessage, type Channels } from './send-message.js';

/** Messages taken per round, and sent at once: a slow receiver holds up at most one of them. */
export const ROUND_SIZE = 20;
const AT_ONCE = 4;
/** Longer than any attempt can take, so a lease runs out only when its instance died. */
const LEASE_MS = 120_000;

export type DeliveryDeps = Pick<AppContext, 'db' | 'config' | 'clock' | 'logger'>;

async function deliverOne(deps: DeliveryDeps, message: OutboxMessage, channels: Channels, counts: OutboxCounts, owner: string): Promise<void> {
  const started = deps.clock.now();
  if (!(await claimMessage(deps.db, message.id, owner, started, LEASE_MS))) return;
  const result = await sendMessage(deps, message, channels);
  const at = deps.clock.now();
  const attempt = message.attempts + 1;
  const next = result.ok ? undefined : result.permanent ? ({ state: 'dead' } as const) : afterFailure(message.created_at, attempt, at);
  const state = next === undefined ? 'delivered' : next.state;
  // The outcome and its attempt's record commit together, and only while this instance holds the lease.
  const settled = await deps.db.transaction().execute(async (trx) => {
    if (!(await settleMessage(trx, message.id, owner, { state, nextAttemptAt: next?.state === 'pending' ? next.at : at, error: result.error, at }))) return false;
    await insertAttempt(trx, { message_id: message.id, attempt, at, ok: result.ok ? 1 : 0, status: result.status, error: result.error, duration_ms: Math.max(0, at - started) });
    return true;
  });
  if (!settled) return;
  counts.count(message.channel, state === 'pending' ? 'failed' : state);
  if (state === 'dead') deps.logger.warn({ message_id: message.id, channel: message.channel, type: message.type, error: result.error }, 'notification not delivered: a dead letter now (webhooks deliveries --failed)');
}

/**
 * One round: the messages due now, each claimed by one conditional update (so of several
 * instances exactly one sends it), sent, and settled: delivered, retried later, or dead.
 * Returns how many were due.
 */
export async function deliverRound(deps: DeliveryDeps, channels: Channels, counts: OutboxCounts, owner: string): Promise<number> {
  const due = await listDue(deps.db, deps.clock.now(), ROUND_SIZE);
  for (let start = 0; start < due.length; start += AT_ONCE) {
    await Promise.all(due.slice(start, start + AT_ONCE).map((message) => deliverOne(deps, message, channels, counts, owner)));
  }
  return due.length;
}
