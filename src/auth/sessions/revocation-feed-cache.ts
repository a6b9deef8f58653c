import type { AppContext } from '../context.js';
import { readRevocations, type RevocationPage } from './revocation-feed.js';

/**
 * Milliseconds the answer without `since` is reused. Anyone may ask for it, as often as they
 * like: one database read per this window, shared by every request meanwhile, whatever the rate.
 * Verifiers poll with a cursor after their first read, which is answered from the database.
 */
export const FULL_FEED_CACHE_MS = 2000;

export type RevocationReader = (since?: string) => Promise<RevocationPage>;

/**
 * Reads the feed, reusing the answer without `since` for FULL_FEED_CACHE_MS (by the injected
 * clock). A read in flight is shared too, so simultaneous requests cost one query; a failed read
 * is not kept.
 */
export function createRevocationReader(deps: Pick<AppContext, 'db' | 'clock' | 'config'>): RevocationReader {
  let cached: { readonly at: number; readonly page: Promise<RevocationPage> } | undefined;
  return (since) => {
    if (since !== undefined) return readRevocations(deps, since);
    const now = deps.clock.now();
    if (cached !== undefined && now >= cached.at && now - cached.at < FULL_FEED_CACHE_MS) return cached.page;
    const page = readRevocations(deps);
    const entry = { at: now, page };
    cached = entry;
    page.catch(() => {
      if (cached === entry) cached = undefined;
    });
    return page;
  };
}
