import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { EventsTable } from '../schema/events.js';
import { storableText } from '../text.js';

export type AuditEvent = Selectable<EventsTable>;
type NewAuditEvent = Insertable<EventsTable>;

export async function insertEvent(db: Db, event: NewAuditEvent): Promise<void> {
  await db
    .insertInto('events')
    .values({
      ...event,
      school_id: storableText(event.school_id),
      username: storableText(event.username),
      user_agent: storableText(event.user_agent),
      detail: storableText(event.detail),
    })
    .execute();
}

interface EventFilter {
  readonly schoolId?: string;
  readonly username?: string;
  readonly type?: string;
  /** Epoch ms, inclusive. */
  readonly sinceAt?: number;
  /** Epoch ms, exclusive. */
  readonly untilAt?: number;
  readonly limit: number;
}

export function listEvents(db: Db, filter: EventFilter): Promise<AuditEvent[]> {
  let query = db.selectFrom('events').selectAll().orderBy('id', 'desc').limit(filter.limit);
  if (filter.schoolId !== undefined) query = query.where('school_id', '=', filter.schoolId);
  if (filter.username !== undefined) query = query.where('username', '=', filter.username);
  if (filter.type !== undefined) query = query.where('type', '=', filter.type);
  if (filter.sinceAt !== undefined) query = query.where('at', '>=', filter.sinceAt);
  if (filter.untilAt !== undefined) query = query.where('at', '<', filter.untilAt);
  return query.execute();
}
