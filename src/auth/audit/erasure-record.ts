import { personalDigest } from '../../db/event-digest.js';
import type { AuditEvent } from '../../db/queries/events.js';
import { AuditProblem, isoTime as when } from './audit-problem.js';

/**
 * What `events verify` asks of an erased event (docs/audit-trail.md, "Erasure"): an event sealed
 * through its personal digest keeps a hash that still verifies, and must belong to an admin whose
 * erasure is recorded by a sealed `admin.erased` event; an event sealed in the earlier form (before
 * migration 018) cannot be re-hashed once its fields are gone, so its seq must be listed by that
 * record. Anything else erased, or any personal field that no longer matches its digest, is an edit.
 */
export const ERASURE_TYPE = 'admin.erased';

/** The detail of an `admin.erased` event: how many events, and the seqs of earlier-form ones. */
export function erasureDetail(count: number, earlierForm: readonly number[]): string {
  return earlierForm.length === 0 ? `${count} events erased` : `${count} events erased; earlier-form seqs ${earlierForm.join(',')}`;
}

const named = (event: AuditEvent) => `event seq ${event.seq} (id ${event.id}, ${event.type} at ${when(event.at)})`;

export class ErasureCoverage {
  private readonly erasedAdmins = new Set<string>();
  private readonly listedSeqs = new Set<number>();
  private readonly waiting: AuditEvent[] = [];

  /** Checks one sealed event's personal fields, and notes what an erased one needs. */
  check(event: AuditEvent): void {
    if (event.type === ERASURE_TYPE && event.erased_at === null && event.admin_id !== null) this.record(event);
    if (event.erased_at === null) {
      if (event.personal_digest !== null && (event.personal_salt === null || personalDigest(event.personal_salt, event) !== event.personal_digest)) {
        throw new AuditProblem(`${named(event)} was edited: its personal fields no longer match their digest`);
      }
      return;
    }
    if (event.personal_salt !== null || event.username !== null || event.ip !== null || event.user_agent !== null || event.detail !== null) {
      throw new AuditProblem(`${named(event)} was edited: it is marked erased but still holds personal data`);
    }
    this.waiting.push(event);
  }

  /** After the whole chain: every erased event is covered by a sealed erasure record. */
  finish(): void {
    for (const event of this.waiting) {
      const covered = event.personal_digest !== null ? event.admin_id !== null && this.erasedAdmins.has(event.admin_id) : this.listedSeqs.has(event.seq ?? 0);
      if (!covered) throw new AuditProblem(`${named(event)} was edited: its personal data is gone, and no sealed ${ERASURE_TYPE} event records that erasure`);
    }
  }

  private record(event: AuditEvent): void {
    this.erasedAdmins.add(event.admin_id ?? '');
    const listed = /; earlier-form seqs ([\d,]+)$/.exec(event.detail ?? '')?.[1];
    for (const seq of listed?.split(',') ?? []) this.listedSeqs.add(Number(seq));
  }
}
