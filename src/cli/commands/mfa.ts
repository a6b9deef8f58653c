import type { Command } from 'commander';
import { describeAdminMfa, resetAdminMfa, setMfaPolicy } from '../../auth/mfa/operator.js';
import { setPasskeyPolicy } from '../../auth/mfa/passkey-policy.js';
import { factorRows, printFactorReport } from '../factor-report.js';
import { printRows } from '../output.js';
import { count } from '../plural.js';
import { say, withServices } from '../run.js';

/** `school mfa <school_id> optional|required` and `school passkeys <school_id> allowed|required|off`, under the `school` command. */
export function registerSchoolMfaCommand(school: Command): void {
  school
    .command('mfa <school_id> <policy>')
    .description('second-factor policy: optional (admins with a factor present it) or required (every admin)')
    .action((schoolId: string, policy: string) =>
      withServices(async (services) => {
        const { sessionsEnded } = await setMfaPolicy(services, schoolId, policy);
        const ended = policy === 'required' ? `; ${count(sessionsEnded, 'password-only session')} ended` : '';
        say(`school ${JSON.stringify(schoolId)}: second factor ${policy}${ended}`);
      }),
    );

  school
    .command('passkeys <school_id> <policy>')
    .description('passkey sign-in: allowed (passkey or password), required (admins with a discoverable passkey use it) or off')
    .action((schoolId: string, policy: string) =>
      withServices(async (services) => {
        const { sessionsEnded } = await setPasskeyPolicy(services, schoolId, policy);
        const ended = policy === 'required' ? `; ${count(sessionsEnded, 'password session')} of passkey holders ended` : '';
        say(`school ${JSON.stringify(schoolId)}: passkey sign-in ${policy}${ended}`);
      }),
    );
}

/** `admin mfa list|reset --school ID --username NAME`, under the `admin` command. */
export function registerAdminMfaCommands(admin: Command, identify: (command: Command) => Command): void {
  const mfa = admin.command('mfa').description("an administrator's second factors");

  identify(mfa.command('list').description('list the second factors of an administrator'))
    .option('--json', 'print JSON')
    .action((options: { school: string; username: string; json?: boolean }) =>
      withServices(async (services) => {
        const described = await describeAdminMfa(services, { schoolId: options.school, username: options.username });
        if (options.json === true) printRows(factorRows(described.factors), true, 'no second factor');
        else printFactorReport(described);
      }, 'none'),
    );

  identify(mfa.command('reset').description('remove every second factor and recovery code, and end the sessions')).action(
    (options: { school: string; username: string }) =>
      withServices(async (services) => {
        const reset = await resetAdminMfa(services, { schoolId: options.school, username: options.username });
        say(`second factor reset: ${count(reset.factors, 'factor')} removed; ${count(reset.sessions, 'session')} ended`);
      }),
  );
}
