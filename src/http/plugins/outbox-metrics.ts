import { Counter, Gauge, type Registry } from 'prom-client';
import type { Database } from '../../db/database.js';
import { countByState } from '../../db/queries/outbox-states.js';
import type { OutboxCounts } from '../../runtime/outbox-counts.js';

const CHANNELS = ['email', 'webhook'] as const;
const STATES = ['pending', 'delivered', 'dead', 'dropped'] as const;

/**
 * The outbox on /metrics: messages by channel and state, read from the database at each scrape
 * (every instance sees the same), and this instance's attempts by outcome.
 */
export function registerOutboxMetrics(registry: Registry, sources: { readonly database: Database; readonly outbox: OutboxCounts }): void {
  new Gauge({
    name: 'school_auth_outbox_messages',
    help: 'Notification messages by channel and state: pending (queued), delivered, dead (dead letters), dropped (the outbox was full)',
    labelNames: ['channel', 'state'],
    registers: [registry],
    async collect() {
      // While the database is down the last figures stand: /metrics still answers.
      const counted = await countByState(sources.database.db).catch(() => undefined);
      if (counted === undefined) return;
      for (const channel of CHANNELS) {
        for (const state of STATES) this.set({ channel, state }, counted.find((row) => row.channel === channel && row.state === state)?.n ?? 0);
      }
    },
  });
  new Counter({
    name: 'school_auth_outbox_attempts_total',
    help: "This instance's delivery attempts by channel and outcome: delivered, failed (retried later), dead",
    labelNames: ['channel', 'outcome'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { channel, outcome, value } of sources.outbox.entries()) this.inc({ channel, outcome }, value);
    },
  });
}
