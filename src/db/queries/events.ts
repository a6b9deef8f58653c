import { sql, type Insertable, type Selectable } from 'kysely';
import { dialectOf, type Db } from '../database.js';
import { personalDigest } from '../event-digest.js';
import type { EventsTable } from '../schema/events.js';
import { storableText } from '../text.js';

export type AuditEvent = Selectable<EventsTable>;

/** What an event records; the personal fields are sealed through their digest, made here from `salt`. */
export type NewAuditEvent = Omit<Insertable<EventsTable>, 'personal_salt' | 'personal_digest' | 'erased_at' | 'seq' | 'hash'>;

/**
 * Appends an event. Its personal fields are stored as storable text and sealed through their
 * digest (event-digest.ts). An event about an admin whose data was erased is stored erased, decided
 * by the statement itself: on PostgreSQL it reads the admin's row FOR SHARE, so an erasure
 * committing meanwhile is either waited for (and seen) or waits for this event (and erases it).
 * Whether it was stored erased.
 */
export async function insertEvent(db: Db, event: NewAuditEvent, salt: string): Promise<boolean> {
  const personal = {
    username: storableText(event.username ?? null),
    ip: event.ip ?? null,
    user_agent: storableText(event.user_agent ?? null),
    detail: storableText(event.detail ?? null),
  };
  const row = { ...event, ...personal, school_id: storableText(event.school_id ?? null), personal_salt: salt, personal_digest: personalDigest(salt, personal) };
  if (row.admin_id === null || row.admin_id === undefined) {
    await db.insertInto('events').values(row).execute();
    return false;
  }
  const lock = dialectOf(db) === 'postgres' ? sql` for share` : sql``;
  // The row is selected (and so locked) whatever its erased_at, which is tested outside: a
  // condition on it inside the locking select would skip the row of an admin not erased in this
  // statement's snapshot, lock nothing, and miss an erasure committing meanwhile.
  const erased = sql<boolean>`(select erased_at from admins where id = ${row.admin_id}${lock}) is not null`;
  const unlessErased = <T>(value: T) => sql<T>`case when ${erased} then null else ${value} end`;
  const stored = await db
    .insertInto('events')
    .columns(['at', 'type', 'school_id', 'admin_id', 'session_id', 'username', 'ip', 'user_agent', 'detail', 'personal_salt', 'personal_digest', 'erased_at'])
    .expression(
      db.selectNoFrom([
        sql<number>`cast(${row.at} as bigint)`.as('at'),
        sql<string>`${row.type}`.as('type'),
        sql<string | null>`${row.school_id}`.as('school_id'),
        sql<string>`${row.admin_id}`.as('admin_id'),
        sql<string | null>`${row.session_id ?? null}`.as('session_id'),
        unlessErased(personal.username).as('username'),
        unlessErased(personal.ip).as('ip'),
        unlessErased(personal.user_agent).as('user_agent'),
        unlessErased(personal.detail).as('detail'),
        unlessErased(salt).as('personal_salt'),
        sql<string>`${row.personal_digest}`.as('personal_digest'),
        sql<number | null>`case when ${erased} then cast(${row.at} as bigint) else null end`.as('erased_at'),
      ]),
    )
    .returning('erased_at')
    .executeTakeFirstOrThrow();
  return stored.erased_at !== null;
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
