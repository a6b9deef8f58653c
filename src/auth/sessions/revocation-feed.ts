import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import { listRevokedSessions, type FeedPosition } from '../../db/queries/revocations.js';
import { AppError } from '../../errors.js';

/** How far ahead of a verifier's clock an `iat` may be (see token-lifetime.ts). */
const CLOCK_SKEW_SECONDS = 60;

/**
 * Seconds a revocation may take from reading the clock (its `revoked_at`) to committing. The
 * cursor never moves past revocations younger than this, so one that commits late with an older
 * `revoked_at` than others already listed is still delivered. Repeats are harmless: a set.
 */
export const FEED_SETTLE_SECONDS = 30;

const START: FeedPosition = { at: 0, sid: '' };

export interface RevocationPage {
  /** Sessions whose access tokens must be refused, oldest revocation first. */
  readonly sids: string[];
  /** Opaque: base64url of `revoked_at:sid`, the position every earlier revocation is known up to. */
  readonly cursor: string;
}

/** How long a session stays in the feed: the longest any of its access tokens can still be accepted. */
export function feedWindowSeconds(config: { readonly accessTokenTtl: number }): number {
  return config.accessTokenTtl + CLOCK_SKEW_SECONDS;
}

export function encodeCursor(position: FeedPosition): string {
  return Buffer.from(`${position.at}:${position.sid}`).toString('base64url');
}

/** A cursor this service gave out, or INVALID_CURSOR (400). */
export function decodeCursor(cursor: string): FeedPosition {
  const text = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const match = /^(\d{1,15}):([A-Za-z0-9_-]{0,128})$/.exec(text);
  if (match?.[1] === undefined || match[2] === undefined) throw new AppError('INVALID_CURSOR');
  return { at: Number(match[1]), sid: match[2] };
}

/**
 * The sessions ended within the feed window (after `since`, when given). Computed from the
 * database and the clock only, so every instance sharing the database answers the same, and the
 * answer changes only when a session ends or one leaves the window (what makes ETags useful).
 */
export async function readRevocations(deps: Pick<AppContext, 'db' | 'clock' | 'config'>, since?: string): Promise<RevocationPage> {
  const after = since === undefined ? START : decodeCursor(since);
  const now = nowSeconds(deps.clock);
  const rows = await listRevokedSessions(deps.db, now - feedWindowSeconds(deps.config), after);
  const settled = rows.filter((row) => row.revoked_at <= now - FEED_SETTLE_SECONDS).at(-1);
  const next = settled === undefined ? after : { at: settled.revoked_at, sid: settled.id };
  return { sids: rows.map((row) => row.id), cursor: encodeCursor(next) };
}
