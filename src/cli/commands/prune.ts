import type { Command } from 'commander';
import { prune } from '../../auth/housekeeping.js';
import { UsageError } from '../../errors.js';
import { say, withServices } from '../run.js';

function days(value: string | undefined, option: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new UsageError(`${option} takes a whole number of days`);
  return parsed;
}

export function registerPruneCommand(program: Command): void {
  program
    .command('prune')
    .description('delete ended sessions, stale throttling state and audit events past their retention (SESSION_RETENTION_DAYS, AUDIT_RETENTION_DAYS)')
    .option('--sessions-older-than <days>', 'keep ended sessions this many days (default: SESSION_RETENTION_DAYS)')
    .option('--events-older-than <days>', 'delete audit events older than this many days (default: AUDIT_RETENTION_DAYS; 0 there keeps them all)')
    .action((options: { sessionsOlderThan?: string; eventsOlderThan?: string }) => {
      const sessionOption = days(options.sessionsOlderThan, '--sessions-older-than');
      const eventOption = days(options.eventsOlderThan, '--events-older-than');
      return withServices(async (services) => {
        const { auditDays, sessionDays } = services.config.retention;
        const retention = auditDays === 0 ? undefined : auditDays;
        const deleted = await prune(services, { sessionDays: sessionOption ?? sessionDays, eventDays: eventOption ?? retention });
        say(`deleted ${deleted.sessions} sessions, ${deleted.deletedAdmins} deleted admins' rows, ${deleted.counters} throttle counters, ${deleted.clientIps} known IPs, ${deleted.events} events, ${deleted.mfaChallenges} expired mfa_tokens, ${deleted.mfaThrottle} second-factor counters, ${deleted.messages} finished notifications`);
        if (deleted.sessionsKeptWithin !== undefined) {
          say(`kept sessions ended within the last ${deleted.sessionsKeptWithin} s: the revocation feed lists them for ACCESS_TOKEN_TTL + 60 s`);
        }
      });
    });
}
