import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { AuditCheckpointsTable } from '../schema/audit-checkpoints.js';
import type { AuditSealerTable } from '../schema/audit-sealer.js';
import type { AuditEvent } from './events.js';

export type CheckpointRow = Selectable<AuditCheckpointsTable>;
export type SealerState = Selectable<AuditSealerTable>;

/**
 * Takes the chain's head for this transaction: one UPDATE of the single sealer row, which holds
 * the row lock (PostgreSQL) or the write lock (SQLite) until commit, so a second sealer waits and
 * then reads the head the first one left. Run it first in the batch's transaction.
 */
export async function claimSealer(db: Db, now: number): Promise<SealerState> {
  const state = await db.updateTable('audit_sealer').set({ claimed_at: now }).where('id', '=', 1).returningAll().executeTakeFirst();
  if (state === undefined) throw new Error('the audit_sealer row is missing: run `school-auth migrate`');
  return state;
}

/** The oldest unsealed events, in the order they were written. */
export function unsealedEvents(db: Db, limit: number): Promise<AuditEvent[]> {
  return db.selectFrom('events').selectAll().where('seq', 'is', null).orderBy('id').limit(limit).execute();
}

/** The earliest time of an event still unsealed; undefined when all are sealed. */
export async function earliestUnsealedAt(db: Db): Promise<number | undefined> {
  const row = await db.selectFrom('events').select((eb) => eb.fn.min('at').as('at')).where('seq', 'is', null).executeTakeFirst();
  return row?.at ?? undefined;
}

/** Seals one event; false when it was sealed meanwhile (the unique `seq` guards the rest). */
export async function sealEvent(db: Db, id: number, seq: number, hash: string): Promise<boolean> {
  const result = await db.updateTable('events').set({ seq, hash }).where('id', '=', id).where('seq', 'is', null).executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

export async function insertCheckpoint(db: Db, checkpoint: Insertable<AuditCheckpointsTable>): Promise<void> {
  const { seq, hash, sealed_at, covers_before, previous, kid, jws } = checkpoint;
  await db.insertInto('audit_checkpoints').values({ seq, hash, sealed_at, covers_before, previous, kid, jws }).execute();
}

/**
 * Replaces a checkpoint's signed version with a newer one over the same events (the heartbeat);
 * false when the row no longer holds the version `readJws` that the new one was made from.
 */
export async function supersedeCheckpoint(
  db: Db,
  seq: number,
  readJws: string,
  next: Pick<CheckpointRow, 'sealed_at' | 'covers_before' | 'kid' | 'jws'>,
): Promise<boolean> {
  const { sealed_at, covers_before, kid, jws } = next;
  const result = await db.updateTable('audit_checkpoints').set({ sealed_at, covers_before, kid, jws }).where('seq', '=', seq).where('jws', '=', readJws).executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

export async function advanceSealer(db: Db, head: { seq: number; hash: string; checkpointSeq: number }): Promise<void> {
  await db.updateTable('audit_sealer').set({ seq: head.seq, hash: head.hash, checkpoint_seq: head.checkpointSeq }).where('id', '=', 1).execute();
}

export async function readSealer(db: Db): Promise<SealerState> {
  return db.selectFrom('audit_sealer').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
}
