import { errors } from 'jose';

/** A token of a session that has ended (logout, revoke, password change, disable, suspend). */
export class SessionRevokedError extends errors.JOSEError {
  static override code = 'ERR_SESSION_REVOKED';
  override code = 'ERR_SESSION_REVOKED';
}

/** The revocation feed has not been read for longer than allowed, and the verifier fails closed. */
export class RevocationsUnavailableError extends errors.JOSEError {
  static override code = 'ERR_REVOCATIONS_UNAVAILABLE';
  override code = 'ERR_REVOCATIONS_UNAVAILABLE';
}

export interface FollowerOptions {
  readonly url: URL;
  /** Milliseconds between two polls. */
  readonly interval: number;
  /** Milliseconds a learned sid is kept: past it, no token of that session can still be valid. */
  readonly retention: number;
  readonly now: () => number;
}

/**
 * Follows GET /auth/revocations: the whole list once, then only what ended after the cursor, with
 * If-None-Match so an unchanged answer is a 304. Keeps the last known list when a poll fails.
 */
export class RevocationFollower {
  private readonly ended = new Map<string, number>();
  private cursor: string | undefined;
  private etag: { url: string; tag: string } | undefined;
  private lastSuccess: number | undefined;
  private readonly startedAt: number;
  private readonly timer: NodeJS.Timeout;
  /** The first poll: verifications wait for it, so a fresh verifier does not start with an empty list. */
  readonly firstPoll: Promise<void>;

  constructor(private readonly options: FollowerOptions) {
    this.startedAt = options.now();
    this.firstPoll = this.poll();
    this.timer = setInterval(() => void this.poll(), options.interval);
    // A verifier must never keep its service's process alive.
    this.timer.unref();
  }

  isEnded(sid: string): boolean {
    return this.ended.has(sid);
  }

  /** Milliseconds since the last successful poll (since the start, before the first). */
  staleness(): number {
    return this.options.now() - (this.lastSuccess ?? this.startedAt);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async poll(): Promise<void> {
    const url = new URL(this.options.url);
    if (this.cursor !== undefined) url.searchParams.set('since', this.cursor);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.etag?.url === url.href) headers['if-none-match'] = this.etag.tag;
    try {
      const response = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
      if (response.status === 200) this.learn(await response.json(), url.href, response.headers.get('etag'));
      else if (response.status !== 304) return;
      this.lastSuccess = this.options.now();
      this.prune();
    } catch {
      // Unreachable or malformed: keep the last known list; staleness() tells how old it is.
    }
  }

  private learn(body: unknown, href: string, etag: string | null): void {
    const page = body as { sids?: unknown; cursor?: unknown };
    if (!Array.isArray(page.sids) || typeof page.cursor !== 'string') throw new TypeError('not a revocation feed');
    const seenAt = this.options.now();
    for (const sid of page.sids) if (typeof sid === 'string' && !this.ended.has(sid)) this.ended.set(sid, seenAt);
    this.etag = etag === null ? undefined : { url: href, tag: etag };
    this.cursor = page.cursor;
  }

  private prune(): void {
    const oldest = this.options.now() - this.options.retention;
    for (const [sid, seenAt] of this.ended) if (seenAt < oldest) this.ended.delete(sid);
  }
}
