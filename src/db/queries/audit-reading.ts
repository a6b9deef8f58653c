import type { Db } from '../database.js';
import type { CheckpointRow } from './audit-sealing.js';
import type { AuditEvent } from './events.js';

/** Bounds of a walk over sealed events: seq after `afterSeq`, optionally by time and last seq. */
export interface SealedRange {
  readonly afterSeq: number;
  readonly throughSeq?: number;
  readonly fromAt?: number;
  readonly untilAt?: number;
}

/**
 * One page of sealed events in sequence order, by keyset (never OFFSET), so walking the whole
 * chain holds one page in memory however long it is.
 */
export function sealedEventsPage(db: Db, range: SealedRange, limit: number): Promise<AuditEvent[]> {
  let query = db.selectFrom('events').selectAll().where('seq', '>', range.afterSeq).orderBy('seq').limit(limit);
  if (range.throughSeq !== undefined) query = query.where('seq', '<=', range.throughSeq);
  if (range.fromAt !== undefined) query = query.where('at', '>=', range.fromAt);
  if (range.untilAt !== undefined) query = query.where('at', '<', range.untilAt);
  return query.execute();
}

export function checkpointsPage(db: Db, afterSeq: number, limit: number): Promise<CheckpointRow[]> {
  return db.selectFrom('audit_checkpoints').selectAll().where('seq', '>', afterSeq).orderBy('seq').limit(limit).execute();
}

export function checkpointAt(db: Db, seq: number): Promise<CheckpointRow | undefined> {
  return db.selectFrom('audit_checkpoints').selectAll().where('seq', '=', seq).executeTakeFirst();
}

/** The first unsealed event written before `at`: a checkpoint made after it should cover it. */
export function firstUnsealedBefore(db: Db, at: number): Promise<AuditEvent | undefined> {
  return db.selectFrom('events').selectAll().where('seq', 'is', null).where('at', '<', at).orderBy('id').limit(1).executeTakeFirst();
}

/** A stored public key by id, whatever its state: retired and withdrawn keys still verify history. */
export function publicKeyByKid(db: Db, kid: string): Promise<{ alg: string; public_jwk: string; revoked_at: number | null } | undefined> {
  return db.selectFrom('signing_keys').select(['alg', 'public_jwk', 'revoked_at']).where('kid', '=', kid).executeTakeFirst();
}
