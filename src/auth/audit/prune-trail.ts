import { pruneSealedEvents } from '../../db/queries/audit-pruning.js';
import type { AppContext } from '../context.js';
import { CLI_CONTEXT, recordEvent } from '../events.js';

/**
 * Removes audit events older than `cutoffMs`, but only whole sealed stretches: up to the last
 * checkpoint made before the cutoff, whose signed hash then anchors the chain, so `events verify`
 * still passes afterwards and still catches tampering with what is left. The prune is itself an
 * event, sealed into the chain after the anchor: cutting the chain's start quietly is not the same.
 */
export async function pruneAuditTrail(deps: Pick<AppContext, 'db' | 'clock'>, cutoffMs: number): Promise<number> {
  const { through, deleted } = await pruneSealedEvents(deps.db, cutoffMs);
  if (through === 0) return 0;
  await recordEvent(deps.db, deps.clock, CLI_CONTEXT, { type: 'events.pruned', detail: `${deleted} events through seq ${through} removed; checkpoint seq ${through} anchors the chain` });
  return deleted;
}
