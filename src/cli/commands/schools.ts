import { UsageError } from '../../errors.js';
import { setSchoolPasswordRecovery } from '../../auth/accounts/recovery-link.js';
import type { Command } from 'commander';
import { addSchool, resumeSchool, suspendSchool } from '../../auth/accounts/schools.js';
import { listSchools } from '../../db/queries/schools.js';
import { listSsoSettings, type SsoSettingsRow } from '../../db/queries/sso-settings.js';
import { isoSeconds, printRows } from '../output.js';
import { count } from '../plural.js';
import { say, withServices } from '../run.js';
import { registerSchoolMfaCommand } from './mfa.js';

/** Who signs the school's admins in: the IdP, and whether passwords still work. */
function ssoSummary(settings: SsoSettingsRow | undefined): string | null {
  if (settings === undefined) return null;
  return `${settings.provider}${settings.password_login === 0 ? ' (password sign-in off)' : ''}`;
}

export function registerSchoolCommands(program: Command): void {
  const school = program.command('school').description('manage schools');

  school
    .command('add <school_id>')
    .description('create a school')
    .option('--name <text>', 'display name')
    .action((schoolId: string, options: { name?: string }) =>
      withServices(async (services) => {
        const created = await addSchool(services, schoolId, options.name);
        say(`school ${JSON.stringify(created.school_id)} created`);
      }),
    );

  school
    .command('list')
    .description('list schools')
    .option('--json', 'print JSON')
    .action((options: { json?: boolean }) =>
      withServices(async ({ db }) => {
        const sso = new Map((await listSsoSettings(db)).map((row) => [row.school_key, row]));
        const rows = (await listSchools(db)).map((row) => ({
          school_id: row.school_id,
          name: row.name,
          status: row.suspended_at === null ? 'active' : 'suspended',
          mfa_policy: row.mfa_policy,
          passkeys: row.passkey_policy,
          password_recovery: row.password_recovery === 1 ? 'on' : 'off',
          sso: ssoSummary(sso.get(row.key)),
          created_at: isoSeconds(row.created_at),
        }));
        printRows(rows, options.json === true, 'no schools yet; create one with: school-auth school add <school_id>');
      }, 'none'),
    );

  school
    .command('suspend <school_id>')
    .description('suspend a school: its admins are signed out and cannot sign in')
    .action((schoolId: string) =>
      withServices(async (services) => {
        const ended = await suspendSchool(services, schoolId);
        say(`school ${JSON.stringify(schoolId)} suspended; ${count(ended, 'session')} ended`);
      }),
    );

  school
    .command('resume <school_id>')
    .description('let the admins of a suspended school sign in again')
    .action((schoolId: string) =>
      withServices(async (services) => {
        await resumeSchool(services, schoolId);
        say(`school ${JSON.stringify(schoolId)} resumed`);
      }),
    );

  school
    .command('recovery <school_id> <state>')
    .description("whether the school's admins may recover a forgotten password by e-mail (on by default)")
    .action((schoolId: string, state: string) =>
      withServices(async (services) => {
        if (state !== 'on' && state !== 'off') throw new UsageError('the second argument is on or off');
        await setSchoolPasswordRecovery(services, schoolId, state === 'on');
        say(`school ${JSON.stringify(schoolId)}: password recovery by e-mail ${state}`);
      }),
    );

  registerSchoolMfaCommand(school);
}
