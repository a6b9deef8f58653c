import { Gauge, type Registry } from 'prom-client';
import type { WorkQueue } from '../../auth/passwords/work-queue.js';
import type { Database } from '../../db/database.js';
import type { DatabaseOutageWatch } from '../../db/outage-watch.js';
import type { Clock } from '../../runtime/clock.js';
import type { OutboxCounts } from '../../runtime/outbox-counts.js';
import { registerAgeGauges } from './age-gauges.js';
import { registerOutboxMetrics } from './outbox-metrics.js';

export interface GaugeSources {
  readonly database: Database;
  readonly hashQueue: WorkQueue;
  readonly databaseOutage: DatabaseOutageWatch;
  readonly outbox: OutboxCounts;
  readonly clock: Clock;
}

/** The gauges of the service's state, read at each scrape rather than kept up to date. */
export function registerStateGauges(registry: Registry, sources: GaugeSources): void {
  new Gauge({
    name: 'school_auth_password_hash_queue_depth',
    help: 'Password hashes waiting for a worker',
    registers: [registry],
    collect() {
      this.set(sources.hashQueue.depth);
    },
  });
  new Gauge({
    name: 'school_auth_password_hash_active',
    help: 'Password hashes being computed',
    registers: [registry],
    collect() {
      this.set(sources.hashQueue.active);
    },
  });
  new Gauge({
    name: 'school_auth_db_pool_connections',
    help: 'Database connections by state',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const stats = sources.database.poolStats();
      this.set({ state: 'total' }, stats.total);
      this.set({ state: 'idle' }, stats.idle);
      this.set({ state: 'waiting' }, stats.waiting);
    },
  });
  new Gauge({
    name: 'school_auth_database_up',
    help: '0 from the first request refused because the database is unavailable until it answers again, else 1',
    registers: [registry],
    collect() {
      this.set(sources.databaseOutage.up ? 1 : 0);
    },
  });
  registerOutboxMetrics(registry, sources);
  registerAgeGauges(registry, sources);
}
