import type { Command } from 'commander';
import { canonicalKey } from '../../auth/identity.js';
import { listEvents } from '../../db/queries/events.js';
import { UsageError } from '../../errors.js';
import { describeEvent } from '../event-text.js';
import { parseInstant } from '../event-bounds.js';
import { printRows } from '../output.js';
import { withServices } from '../run.js';
import { registerEventChainCommands } from './events-chain.js';

interface ListOptions {
  school?: string;
  username?: string;
  type?: string;
  since?: string;
  until?: string;
  limit: string;
  json?: boolean;
}

const ERASED_SUBJECT = '(erased)';

export function registerEventCommands(program: Command): void {
  const events = program
    .command('events')
    .description('the audit trail, newest first')
    .option('--school <id>', 'only this school')
    .option('--username <name>', 'only events about this username')
    .option('--type <type>', 'only events of this type (login.failure, keys.revoked, ...)')
    .option('--since <time>', 'only events at or after this ISO 8601 time')
    .option('--until <time>', 'only events before this ISO 8601 time')
    .option('--limit <n>', 'at most this many events', '50')
    .option('--json', 'print JSON')
    .action((options: ListOptions) => {
      const limit = /^\d{1,6}$/.test(options.limit) ? Number(options.limit) : Number.NaN;
      if (!(limit >= 1 && limit <= 100_000)) throw new UsageError('--limit takes a whole number from 1 to 100000');
      return withServices(async ({ db }) => {
        const filter = {
          schoolId: options.school === undefined ? undefined : canonicalKey(options.school),
          username: options.username,
          type: options.type,
          sinceAt: options.since === undefined ? undefined : parseInstant(options.since, '--since'),
          untilAt: options.until === undefined ? undefined : parseInstant(options.until, '--until'),
        };
        const found = await listEvents(db, { ...filter, limit });
        if (options.json === true) {
          const rows = found.map((event) => ({
            at: new Date(event.at).toISOString(),
            type: event.type,
            school_id: event.school_id,
            username: event.username,
            ip: event.ip,
            user_agent: event.user_agent,
            detail: event.detail,
            session: event.session_id,
            admin_id: event.admin_id,
            erased: event.erased_at !== null,
          }));
          printRows(rows, true, 'no events');
          return;
        }
        // For people: what happened in words, and who or what did it (IP and user agent in one cell).
        const rows = found.map((event) => ({
          at: new Date(event.at).toISOString(),
          school_id: event.school_id,
          // An erased subject is shown as such: their name, address and agent are gone from the database.
          username: event.erased_at === null ? event.username : ERASED_SUBJECT,
          event: describeEvent(event.type, event.detail),
          by: [event.ip, event.user_agent].filter((part) => part !== null).join(' ') || null,
          session: event.session_id,
        }));
        printRows(rows, false, 'no events');
      }, 'none');
    });
  registerEventChainCommands(events);
}
