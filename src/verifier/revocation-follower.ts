import { errors } from 'jose';

/** A token of a session that has ended (logout, revoke, password change, disable, suspend). */
export class SessionRevokedError extends errors.JOSEError {
  static override code = 'ERR_SESSION_REVOKED';
  override code = 'ERR_SESSION_REVOKED';
}

/** The revocation feed has not been read (recently enough), and the verifier fails closed. */
export class RevocationsUnavailableError extends errors.JOSEError {
  static override code = 'ERR_REVOCATIONS_UNAVAILABLE';
  override code = 'ERR_REVOCATIONS_UNAVAILABLE';
}

interface FollowerOptions {
  readonly url: URL;
  /** Milliseconds between two polls. */
  readonly interval: number;
  /** Milliseconds a learned sid is kept: past it, no token of that session can still be valid. */
  readonly retention: number;
  readonly now: () => number;
}

/** A verification finding the feed never read starts a new read, at most this often (ms). */
const RETRY_GAP_MS = 1000;

/** Bounds one poll, should a server keep answering `has_more`; the next poll goes on from the cursor. */
const MAX_PAGES_PER_POLL = 1000;

/**
 * Follows GET /auth/revocations: the whole list once, then only what ended after the cursor, with
 * If-None-Match so an unchanged answer is a 304; page by page while the answer says `has_more`.
 * A poll succeeds only once it has read to the end. Keeps the last known list when a poll fails.
 */
export class RevocationFollower {
  private readonly ended = new Map<string, number>();
  private cursor: string | undefined;
  private etag: { url: string; tag: string } | undefined;
  private lastSuccess: number | undefined;
  private lastAttempt: number;
  private inFlight: Promise<void> | undefined;
  private readonly startedAt: number;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly options: FollowerOptions) {
    this.startedAt = options.now();
    this.lastAttempt = this.startedAt;
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), options.interval);
    // A verifier must never keep its service's process alive.
    this.timer.unref();
  }

  isEnded(sid: string): boolean {
    return this.ended.has(sid);
  }

  /** Whether a poll has ever read the feed to its end. */
  hasRead(): boolean {
    return this.lastSuccess !== undefined;
  }

  /** Milliseconds since the last successful poll (since the start, before the first). */
  staleness(): number {
    return this.options.now() - (this.lastSuccess ?? this.startedAt);
  }

  /** Until the feed has been read once: waits for the read in flight, or starts one if the last failed a while ago. */
  async readIfNeverRead(): Promise<void> {
    if (this.hasRead()) return;
    if (this.inFlight === undefined && this.options.now() - this.lastAttempt < RETRY_GAP_MS) return;
    await this.refresh();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One poll at a time: the cursor moves page by page. */
  private refresh(): Promise<void> {
    this.inFlight ??= this.poll().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async poll(): Promise<void> {
    this.lastAttempt = this.options.now();
    try {
      for (let page = 0; page < MAX_PAGES_PER_POLL; page += 1) {
        if (await this.readPage()) continue;
        this.lastSuccess = this.options.now();
        this.prune();
        return;
      }
    } catch {
      // Unreachable or malformed: keep the last known list; staleness() tells how old it is.
    }
  }

  /** Reads the page after the cursor; true when more pages follow. */
  private async readPage(): Promise<boolean> {
    const url = new URL(this.options.url);
    if (this.cursor !== undefined) url.searchParams.set('since', this.cursor);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.etag?.url === url.href) headers['if-none-match'] = this.etag.tag;
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
    if (response.status === 304) return false;
    if (response.status !== 200) throw new Error(`the revocation feed answered ${response.status}`);
    return this.learn(await response.json(), url.href, response.headers.get('etag'));
  }

  private learn(body: unknown, href: string, etag: string | null): boolean {
    const page = body as { sids?: unknown; cursor?: unknown; has_more?: unknown };
    if (!Array.isArray(page.sids) || typeof page.cursor !== 'string') throw new TypeError('not a revocation feed');
    const seenAt = this.options.now();
    for (const sid of page.sids) if (typeof sid === 'string' && !this.ended.has(sid)) this.ended.set(sid, seenAt);
    this.etag = etag === null ? undefined : { url: href, tag: etag };
    this.cursor = page.cursor;
    // A server of an earlier version sends no has_more: its one answer is the whole list.
    return page.has_more === true;
  }

  private prune(): void {
    const oldest = this.options.now() - this.options.retention;
    for (const [sid, seenAt] of this.ended) if (seenAt < oldest) this.ended.delete(sid);
  }
}
