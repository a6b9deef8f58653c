import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../../db/database.js';
import { sealedEventsPage, type SealedRange } from '../../db/queries/audit-reading.js';
import type { AuditEvent } from '../../db/queries/events.js';
import { sealedView } from './canonical-event.js';

const PAGE = 1000;

/** How often `events follow` looks for newly sealed events. */
const FOLLOW_POLL_MS = 1000;

/**
 * One exported event: every sealed field, then its `hash` (docs/audit-trail.md). An event sealed
 * through its personal digest also carries the fields and their salt, to check the digest by;
 * an erased one says so.
 */
function exportLine(event: AuditEvent): string {
  const view = sealedView(event, event.seq ?? 0);
  const personal = 'personal' in view ? { username: event.username, ip: event.ip, user_agent: event.user_agent, detail: event.detail, personal_salt: event.personal_salt } : {};
  return JSON.stringify({ ...view, ...personal, ...(event.erased_at === null ? {} : { erased: true }), hash: event.hash });
}

/**
 * Sealed events in sequence order, as export lines, a page at a time by keyset: memory stays
 * flat however many there are. Stops at the end of `range` or of what is sealed now.
 */
export async function* sealedEventLines(db: Db, range: SealedRange): AsyncGenerator<string> {
  let afterSeq = range.afterSeq;
  for (;;) {
    const page = await sealedEventsPage(db, { ...range, afterSeq }, PAGE);
    for (const event of page) yield exportLine(event);
    if (page.length < PAGE) return;
    afterSeq = page.at(-1)?.seq ?? afterSeq;
  }
}

/** Like sealedEventLines, then waits for events sealed later, until `signal` aborts. */
export async function* followSealedEvents(db: Db, afterSeq: number, signal: AbortSignal): AsyncGenerator<string> {
  let last = afterSeq;
  while (!signal.aborted) {
    const page = await sealedEventsPage(db, { afterSeq: last }, PAGE);
    for (const event of page) yield exportLine(event);
    last = page.at(-1)?.seq ?? last;
    if (page.length < PAGE) await sleep(FOLLOW_POLL_MS, undefined, { signal }).catch(() => undefined);
  }
}
