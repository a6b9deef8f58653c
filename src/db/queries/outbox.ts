import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { OutboxTable } from '../schema/notifications.js';

export type OutboxMessage = Selectable<OutboxTable>;
export type NewOutboxMessage = Omit<Insertable<OutboxTable>, 'state' | 'attempts'>;

export async function insertMessages(db: Db, messages: readonly NewOutboxMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await db
    .insertInto('outbox')
    .values(messages.map((message) => ({ ...message, state: 'pending', attempts: 0 })))
    .execute();
}

export async function countPending(db: Db, channel?: string): Promise<number> {
  let query = db.selectFrom('outbox').select((eb) => eb.fn.countAll<string | number>().as('n')).where('state', '=', 'pending');
  if (channel !== undefined) query = query.where('channel', '=', channel);
  const row = await query.executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Marks the `count` oldest pending messages dropped; returns how many were. */
export async function dropOldestPending(db: Db, count: number, now: number): Promise<number> {
  const oldest = db.selectFrom('outbox').select('id').where('state', '=', 'pending').orderBy('created_at').orderBy('id').limit(count);
  const result = await db
    .updateTable('outbox')
    .set({ state: 'dropped', finished_at: now, last_error: 'dropped: the outbox was full' })
    .where('id', 'in', oldest)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Pending messages due by `now` whose lease (if any) has run out, oldest first. */
export function listDue(db: Db, now: number, limit: number): Promise<OutboxMessage[]> {
  return db
    .selectFrom('outbox')
    .selectAll()
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
}

/**
 * Takes the lease of one message: true for exactly one caller of all instances, decided by this
 * one conditional update, so exactly one delivers it until the lease runs out.
 */
export async function claimMessage(db: Db, id: string, owner: string, now: number, leaseMs: number): Promise<boolean> {
  const result = await db
    .updateTable('outbox')
    .set({ lease_owner: owner, lease_until: now + leaseMs })
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

interface Outcome {
  readonly state: 'pending' | 'delivered' | 'dead';
  readonly nextAttemptAt: number;
  readonly error: string | null;
  readonly at: number;
}

/** Records what an attempt came to, if this owner still holds the lease (else another instance took over). */
export async function settleMessage(db: Db, id: string, owner: string, outcome: Outcome): Promise<boolean> {
  const result = await db
    .updateTable('outbox')
    .set({
      state: outcome.state,
      attempts: sql<number>`attempts + 1`,
      next_attempt_at: outcome.nextAttemptAt,
      last_error: outcome.error,
      finished_at: outcome.state === 'pending' ? null : outcome.at,
      lease_owner: null,
      lease_until: null,
    })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Puts a delivered, dead or dropped message back in line, due now; false when none has that id. */
export async function requeueMessage(db: Db, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('outbox')
    .set({ state: 'pending', next_attempt_at: now, finished_at: null, lease_owner: null, lease_until: null })
    .where('id', '=', id)
    .where('state', '!=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export function findMessage(db: Db, id: string): Promise<OutboxMessage | undefined> {
  return db.selectFrom('outbox').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Finished messages older than `before` (epoch ms) and their attempts; returns how many messages. */
export async function deleteFinishedMessages(db: Db, before: number): Promise<number> {
  const old = db.selectFrom('outbox').select('id').where('state', '!=', 'pending').where('finished_at', '<', before);
  await db.deleteFrom('outbox_attempts').where('message_id', 'in', old).execute();
  const result = await db.deleteFrom('outbox').where('state', '!=', 'pending').where('finished_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * When the next pending message can be taken (epoch ms): its next attempt, or the end of the lease
 * another instance holds on it; undefined when none waits.
 */
export async function nextDueAt(db: Db): Promise<number | undefined> {
  const row = await db
    .selectFrom('outbox')
    .select(sql<number | string | null>`min(case when lease_until > next_attempt_at then lease_until else next_attempt_at end)`.as('at'))
    .where('state', '=', 'pending')
    .executeTakeFirst();
  return row?.at === null || row?.at === undefined ? undefined : Number(row.at);
}
