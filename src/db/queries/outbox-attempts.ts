import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { OutboxAttemptsTable } from '../schema/notifications.js';
import type { OutboxMessage } from './outbox.js';

export type OutboxAttempt = Selectable<OutboxAttemptsTable>;

export async function insertAttempt(db: Db, attempt: Insertable<OutboxAttemptsTable>): Promise<void> {
  await db.insertInto('outbox_attempts').values(attempt).onConflict((conflict) => conflict.doNothing()).execute();
}

interface DeliveryFilter {
  readonly failedOnly: boolean;
  readonly channel?: string;
  readonly limit: number;
}

/** The newest messages, with their attempts: what `webhooks deliveries` prints. */
export async function listDeliveries(db: Db, filter: DeliveryFilter): Promise<{ message: OutboxMessage; attempts: OutboxAttempt[] }[]> {
  let query = db.selectFrom('outbox').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit);
  if (filter.failedOnly) query = query.where((eb) => eb.or([eb('state', 'in', ['dead', 'dropped']), eb.and([eb('state', '=', 'pending'), eb('attempts', '>', 0)])]));
  if (filter.channel !== undefined) query = query.where('channel', '=', filter.channel);
  const messages = await query.execute();
  if (messages.length === 0) return [];
  const attempts = await db
    .selectFrom('outbox_attempts')
    .selectAll()
    .where(
      'message_id',
      'in',
      messages.map((message) => message.id),
    )
    .orderBy('attempt')
    .execute();
  return messages.map((message) => ({ message, attempts: attempts.filter((attempt) => attempt.message_id === message.id) }));
}
