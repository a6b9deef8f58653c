import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import { findWindowStart, listRevokedSessions, type FeedPosition } from '../../db/queries/revocations.js';
import { AppError } from '../../errors.js';

/** How far ahead of a verifier's clock an `iat` may be (see token-lifetime.ts). */
const CLOCK_SKEW_SECONDS = 60;

/** Most sids in one answer: bounds what one anonymous GET costs; the cursor leads to the rest. */
const FEED_PAGE_SIZE = 1000;

/** Before every position: the whole window. */
export const START: FeedPosition = { seq: 0, sid: '' };

export interface RevocationPage {
  /** Sessions whose access tokens must be refused, in the order they ended. */
  readonly sids: string[];
  /** Opaque: base64url of `r<revocation_seq>.<sid>`, the position every earlier revocation is listed up to. */
  readonly cursor: string;
  /** True when more sids follow: ask again at once with `since=cursor`. */
  readonly has_more: boolean;
}

/** How long a session stays in the feed: the longest any of its access tokens can still be accepted. */
export function feedWindowSeconds(config: { readonly accessTokenTtl: number }): number {
  return config.accessTokenTtl + CLOCK_SKEW_SECONDS;
}

export function encodeCursor(position: FeedPosition): string {
  return Buffer.from(`r${position.seq}.${position.sid}`).toString('base64url');
}

/**
 * A cursor this service gave out, or INVALID_CURSOR (400). A cursor of the format before the
 * sequence (`revoked_at:sid`, a writer's clock) cannot be placed in the new order: it reads from
 * the start, so its client gets the whole list again rather than an error or a gap.
 */
export function decodeCursor(cursor: string): FeedPosition {
  const text = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const current = /^r(\d{1,15})\.([A-Za-z0-9_-]{0,128})$/.exec(text);
  if (current?.[1] !== undefined && current[2] !== undefined) return { seq: Number(current[1]), sid: current[2] };
  if (/^\d{1,15}:[A-Za-z0-9_-]{0,128}$/.test(text)) return START;
  throw new AppError('INVALID_CURSOR');
}

/** The position the feed starts at now: every session ended within the window is at or after it. */
export async function findFeedStart(deps: Pick<AppContext, 'db' | 'clock' | 'config'>): Promise<FeedPosition> {
  const from = nowSeconds(deps.clock) - feedWindowSeconds(deps.config);
  return { seq: await findWindowStart(deps.db, from), sid: '' };
}

function isBefore(a: FeedPosition, b: FeedPosition): boolean {
  return a.seq < b.seq || (a.seq === b.seq && a.sid < b.sid);
}

/**
 * One page of the sessions ended within the feed window after `after` (START: from the
 * beginning). `start` comes from findFeedStart, at most a few seconds ago (it only moves
 * forward): a cursor before it, or an old one, is read from there, so no cursor makes the
 * database walk sessions that have left the window. Computed from the database and the clock
 * only, so every instance sharing the database answers the same, and the answer changes only
 * when a session ends or one leaves the window (what makes ETags useful).
 */
export async function readRevocationPage(deps: Pick<AppContext, 'db' | 'clock' | 'config'>, after: FeedPosition, start: FeedPosition): Promise<RevocationPage> {
  const from = nowSeconds(deps.clock) - feedWindowSeconds(deps.config);
  const position = isBefore(after, start) ? start : after;
  const rows = await listRevokedSessions(deps.db, from, position, FEED_PAGE_SIZE + 1);
  const page = rows.slice(0, FEED_PAGE_SIZE);
  const last = page.at(-1);
  return {
    sids: page.map((row) => row.id),
    cursor: encodeCursor(last === undefined ? position : { seq: last.revocation_seq, sid: last.id }),
    has_more: rows.length > FEED_PAGE_SIZE,
  };
}
