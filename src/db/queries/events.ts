import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { EventsTable } from '../schema/events.js';
import { storableText } from '../text.js';

export type AuditEvent = Selectable<EventsTable>;
export type NewAuditEvent = Insertable<EventsTable>;

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

export function listEvents(db: Db, filter: { schoolId?: string; limit: number }): Promise<AuditEvent[]> {
  let query = db.selectFrom('events').selectAll().orderBy('id', 'desc').limit(filter.limit);
  if (filter.schoolId !== undefined) query = query.where('school_id', '=', filter.schoolId);
  return query.execute();
}
