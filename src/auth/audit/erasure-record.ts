import { createHash } from 'node:crypto';
import { personalDigest } from '../../db/event-digest.js';
import type { AuditEvent } from '../../db/queries/events.js';
import { AuditProblem, isoTime as when } from './audit-problem.js';

/**
 * What `events verify` asks of an erased event (docs/audit-trail.md, "Erasure"): an event sealed
 * through its personal digest keeps a hash that still verifies, and must belong to an admin whose
 * erasure a sealed `admin.erased` event records. An event of the earlier form (before migration
 * 018) cannot be hashed again once its fields are gone: the record lists its seq and commits, in
 * one SHA-256, to the hash it followed and the fields it kept, which verify recomputes. Anything
 * else erased, or any personal field that no longer matches its digest, is an edit.
 */
export const ERASURE_TYPE = 'admin.erased';

/** The fields an erased earlier-form event keeps, and the hash before it: what the record commits to. */
export function earlierFormLink(previousHash: string, event: Pick<AuditEvent, 'id' | 'seq' | 'at' | 'type' | 'school_id' | 'admin_id' | 'session_id'>): string {
  const kept = { admin_id: event.admin_id, at: event.at, id: event.id, school_id: event.school_id, seq: event.seq, session_id: event.session_id, type: event.type };
  return `${previousHash}${JSON.stringify(kept)}`;
}

const sha256 = (lines: readonly string[]) => createHash('sha256').update(lines.join('\n')).digest('hex');

/** The detail of an `admin.erased` event: how many events; the earlier-form seqs and their commitment. */
export function erasureDetail(count: number, earlierForm: readonly { seq: number; link: string }[]): string {
  if (earlierForm.length === 0) return `${count} events erased`;
  return `${count} events erased; earlier-form seqs ${earlierForm.map((event) => event.seq).join(',')}; sha256 ${sha256(earlierForm.map((event) => event.link))}`;
}

const named = (event: AuditEvent) => `event seq ${event.seq} (id ${event.id}, ${event.type} at ${when(event.at)})`;
const RECORDED = /; earlier-form seqs ([\d,]+); sha256 ([0-9a-f]{64})$/;

export class ErasureCoverage {
  private readonly erasedAdmins = new Set<string>();
  private readonly records: { event: AuditEvent; seqs: number[]; sha: string }[] = [];
  private readonly links = new Map<number, string>();
  private readonly waiting: AuditEvent[] = [];

  /** Checks one sealed event's personal fields (`previousHash`: the hash it follows), and notes what an erased one needs. */
  check(event: AuditEvent, previousHash: string): void {
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
    if (event.personal_digest === null) this.links.set(event.seq ?? 0, earlierFormLink(previousHash, event));
    this.waiting.push(event);
  }

  /** After the whole chain (from `firstSeq`, where prune left it): every erased event is covered, every commitment holds. */
  finish(firstSeq: number): void {
    const listed = new Set(this.records.flatMap((record) => record.seqs));
    for (const event of this.waiting) {
      const covered = event.personal_digest !== null ? event.admin_id !== null && this.erasedAdmins.has(event.admin_id) : listed.has(event.seq ?? 0);
      if (!covered) throw new AuditProblem(`${named(event)} was edited: its personal data is gone, and no sealed ${ERASURE_TYPE} event records that erasure`);
    }
    for (const { event, seqs, sha } of this.records) {
      // Events prune has cut off can no longer be recomputed; what remains of the chain still can.
      if (seqs.some((seq) => seq < firstSeq)) continue;
      const lines = seqs.map((seq) => this.links.get(seq));
      if (lines.some((line) => line === undefined) || sha256(lines as string[]) !== sha) {
        throw new AuditProblem(`the earlier-form events ${named(event)} erased were edited: they, or the events before them, no longer match what it recorded`);
      }
    }
  }

  private record(event: AuditEvent): void {
    this.erasedAdmins.add(event.admin_id ?? '');
    const [, seqs, sha] = RECORDED.exec(event.detail ?? '') ?? [];
    if (seqs !== undefined && sha !== undefined) this.records.push({ event, seqs: seqs.split(',').map(Number), sha });
  }
}
