import type { Clock } from '../runtime/clock.js';
import type { Logger } from '../runtime/logger.js';
import type { Database } from './database.js';
import { outageReason } from './errors.js';

/** How often a database that refused a request is asked again whether it answers. */
const PROBE_INTERVAL_MS = 1000;

interface Outage {
  readonly since: number;
  refused: number;
}

interface OutageWatchDeps {
  readonly database: Pick<Database, 'ping'>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly probeIntervalMs?: number;
}

/**
 * Whether the database is down, as the requests it fails show: an outage is logged when it
 * begins and when it ends, one line each, instead of once per refused request. It begins with
 * the first request refused because the database is unavailable; from then on a round trip is
 * tried every second, so the end is seen even when no request comes, and it ends with the first
 * one that answers.
 */
export class DatabaseOutageWatch {
  private outage: Outage | undefined;
  private probe: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly deps: OutageWatchDeps) {}

  /** False from the first refused request until the database answers again. */
  get up(): boolean {
    return this.outage === undefined;
  }

  /** A request was refused because the database is unavailable (isDatabaseUnavailable). */
  refused(error: unknown): void {
    if (this.outage !== undefined) {
      this.outage.refused += 1;
      return;
    }
    const since = this.deps.clock.now();
    this.outage = { since, refused: 1 };
    const reason = outageReason(error);
    this.deps.logger.error({ reason }, `database unavailable since ${new Date(since).toISOString()}: ${reason}`);
    this.scheduleProbe();
  }

  /** Stops probing; the database is being closed. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.probe);
  }

  private scheduleProbe(): void {
    if (this.stopped) return;
    // Unreferenced: an outage must not keep a stopping process alive.
    this.probe = setTimeout(() => void this.probeOnce(), this.deps.probeIntervalMs ?? PROBE_INTERVAL_MS).unref();
  }

  private async probeOnce(): Promise<void> {
    const answered = await this.deps.database.ping().then(
      () => true,
      () => false,
    );
    if (this.stopped || this.outage === undefined) return;
    if (!answered) return this.scheduleProbe();
    const { since, refused } = this.outage;
    this.outage = undefined;
    const seconds = Math.round((this.deps.clock.now() - since) / 1000);
    const requests = refused === 1 ? 'request' : 'requests';
    // Warn, not info: whoever filters the log to see the outage begin must see it end.
    this.deps.logger.warn({ seconds, refused }, `database back after ${seconds} s; ${refused} ${requests} refused meanwhile`);
  }
}
