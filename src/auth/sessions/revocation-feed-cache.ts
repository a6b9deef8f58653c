import type { FeedPosition } from '../../db/queries/revocations.js';
import type { AppContext } from '../context.js';
import { START, decodeCursor, findFeedStart, readRevocationPage, type RevocationPage } from './revocation-feed.js';

/**
 * Milliseconds the answer without `since`, and where the window starts, are reused. Anyone may
 * ask, as often as they like: one database read of each per this window, shared by every request
 * meanwhile, whatever the rate. An answer to a cursor reads one page along an index.
 */
const FULL_FEED_CACHE_MS = 2000;

type RevocationReader = (since?: string) => Promise<RevocationPage>;

interface Snapshot {
  readonly at: number;
  readonly start: Promise<FeedPosition>;
  first?: Promise<RevocationPage>;
}

/**
 * Reads the feed: a cursor is checked before anything is read (INVALID_CURSOR), the answer
 * without `since` is computed at most once per FULL_FEED_CACHE_MS (by the injected clock), a read
 * in flight is shared, and a failed one is not kept.
 */
export function createRevocationReader(deps: Pick<AppContext, 'db' | 'clock' | 'config'>): RevocationReader {
  let cached: Snapshot | undefined;
  const forget = (snapshot: Snapshot) => () => {
    if (cached === snapshot) cached = undefined;
  };
  const snapshot = (): Snapshot => {
    const now = deps.clock.now();
    if (cached !== undefined && now >= cached.at && now - cached.at < FULL_FEED_CACHE_MS) return cached;
    const fresh: Snapshot = { at: now, start: findFeedStart(deps) };
    fresh.start.catch(forget(fresh));
    cached = fresh;
    return fresh;
  };
  return async (since) => {
    const after = since === undefined ? undefined : decodeCursor(since);
    const current = snapshot();
    if (after !== undefined) return readRevocationPage(deps, after, await current.start);
    if (current.first === undefined) {
      current.first = current.start.then((start) => readRevocationPage(deps, START, start));
      current.first.catch(forget(current));
    }
    return current.first;
  };
}
