import type { Command } from 'commander';
import { canonicalKey } from '../../auth/identity.js';
import { isSessionAlive } from '../../db/queries/session-liveness.js';
import { requireSchool } from '../../auth/accounts/schools.js';
import { revokeSessionById, revokeSessionsOfAdmin } from '../../auth/accounts/session-control.js';
import { nowSeconds } from '../../runtime/clock.js';
import { listSessions } from '../../db/queries/sessions.js';
import { UsageError } from '../../errors.js';
import { isoSeconds, printRows } from '../output.js';
import { count } from '../plural.js';
import { say, withServices } from '../run.js';

export function registerSessionCommands(program: Command): void {
  const sessions = program.command('sessions').description('list and revoke sign-in sessions');

  sessions
    .command('list')
    .description('list the sessions of a school, newest first')
    .requiredOption('--school <id>', 'school id')
    .option('--username <name>', 'only this administrator')
    .option('--json', 'print JSON')
    .action((options: { school: string; username?: string; json?: boolean }) =>
      withServices(async ({ db, clock, config }) => {
        const school = await requireSchool(db, options.school);
        const usernameKey = options.username === undefined ? undefined : canonicalKey(options.username);
        const now = nowSeconds(clock);
        const rows = (await listSessions(db, { schoolKey: school.key, usernameKey })).map((row) => ({
          session: row.id,
          username: row.username,
          status: sessionStatus(row, now, config),
          created_at: isoSeconds(row.created_at),
          last_used_at: isoSeconds(row.last_used_at),
          expires_at: isoSeconds(row.expires_at),
          ip: row.ip,
          user_agent: row.user_agent,
          // What GET /admin/auth/sessions shows: the level the session signed in with.
          acr: row.acr,
          amr: row.amr,
        }));
        printRows(rows, options.json === true, 'no sessions');
      }, 'none'),
    );

  sessions
    .command('revoke')
    .description('end one session (--session) or every session of an administrator (--school and --username)')
    .option('--session <sid>', 'session id, from `sessions list`')
    .option('--school <id>', 'school id')
    .option('--username <name>', 'admin username')
    .action((options: { session?: string; school?: string; username?: string }) =>
      withServices(async (services) => {
        if (options.session !== undefined) {
          const revoked = await revokeSessionById(services, options.session);
          say(revoked ? `session ${options.session} revoked` : `session ${options.session} had already ended`);
          return;
        }
        if (options.school === undefined || options.username === undefined) {
          throw new UsageError('say which sessions to revoke: --session SID, or --school ID --username NAME');
        }
        const ended = await revokeSessionsOfAdmin(services, { schoolId: options.school, username: options.username });
        say(`${count(ended, 'session')} revoked`);
      }),
    );
}

type SessionRow = Parameters<typeof isSessionAlive>[0] & { revoke_reason: string | null };

function sessionStatus(
  row: SessionRow,
  now: number,
  config: { refreshIdleTimeout: number },
): string {
  if (row.revoked_at !== null) return `revoked (${row.revoke_reason ?? 'revoked'})`;
  if (!isSessionAlive(row, now, config)) return row.credential_epoch === row.admin_credential_epoch ? 'expired' : 'ended';
  return 'active';
}
