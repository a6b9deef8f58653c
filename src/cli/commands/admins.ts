import { createRecoveryLink } from '../../auth/accounts/recovery-link.js';
import type { Command } from 'commander';
import { UsageError } from '../../errors.js';
import { addAdmin, changePassword, setAdminEnabled, unlockAdmin } from '../../auth/accounts/admins.js';
import { requireSchool } from '../../auth/accounts/schools.js';
import { describeAdminMfa } from '../../auth/mfa/operator.js';
import { listAdmins } from '../../db/queries/admins.js';
import { countConfirmedFactors } from '../../db/queries/mfa-factors.js';
import { printFactorReport } from '../factor-report.js';
import { isoSeconds, printRows } from '../output.js';
import { readNewPassword } from '../password-input.js';
import { count } from '../plural.js';
import { say, withServices } from '../run.js';
import { addSsoAdmin } from '../../auth/sso/links.js';
import { registerAdminDataCommands } from './admin-data.js';
import { registerAdminMfaCommands } from './mfa.js';
import { registerAdminSsoCommands } from './sso.js';
import { emailAddress, setAdminEmail } from '../../auth/accounts/admin-email.js';
import { emailsByAdmin } from '../../db/queries/admin-emails.js';

interface AdminOptions {
  school: string;
  username: string;
  passwordStdin?: boolean;
}

function identify(command: Command): Command {
  return command.requiredOption('--school <id>', 'school id').requiredOption('--username <name>', 'admin username');
}

const FACTOR_NOUNS: Record<string, string> = { totp: 'TOTP app', webauthn: 'passkey' };

/** "1 TOTP app, 2 passkeys" per admin id, from the confirmed factors counted by type. */
function describeFactorsByAdmin(counts: readonly { admin_id: string; type: string; factors: number }[]): Map<string, string> {
  const described = new Map<string, string>();
  for (const { admin_id, type, factors } of counts) {
    const text = count(Number(factors), FACTOR_NOUNS[type] ?? type);
    const before = described.get(admin_id);
    described.set(admin_id, before === undefined ? text : `${before}, ${text}`);
  }
  return described;
}

export function registerAdminCommands(program: Command): void {
  const admin = program.command('admin').description('manage school administrators');

  identify(admin.command('add').description('create an administrator'))
    .option('--password-stdin', 'read the password from standard input instead of a prompt')
    .option('--sso-email <email>', "create the admin without a password, signing in only through the school's IdP as this email")
    .option('--email <address>', 'where the admin is told of changes to their account (see admin email set)')
    .action(async (options: AdminOptions & { ssoEmail?: string; email?: string }) => {
      const email = options.email === undefined ? undefined : emailAddress(options.email, '--email');
      const ref = { schoolId: options.school, username: options.username };
      const notifyAt = async (services: Parameters<typeof setAdminEmail>[0]) => {
        if (email !== undefined) await setAdminEmail(services, ref, email);
      };
      if (options.ssoEmail !== undefined) {
        const ssoEmail = options.ssoEmail;
        await withServices(async (services) => {
          await addSsoAdmin(services, ref, ssoEmail);
          await notifyAt(services);
          say(`admin ${JSON.stringify(options.username)} created in school ${JSON.stringify(options.school)}; signs in through single sign-on as ${ssoEmail}`);
        });
        return;
      }
      const password = await readNewPassword(options.passwordStdin === true);
      await withServices(async (services) => {
        await addAdmin(services, ref, password);
        await notifyAt(services);
        say(`admin ${JSON.stringify(options.username)} created in school ${JSON.stringify(options.school)}`);
      });
    });

  identify(admin.command('passwd').description("set an administrator's password and end their sessions"))
    .option('--password-stdin', 'read the password from standard input instead of a prompt')
    .action(async (options: AdminOptions) => {
      const password = await readNewPassword(options.passwordStdin === true);
      await withServices(async (services) => {
        const ref = { schoolId: options.school, username: options.username };
        const ended = await changePassword(services, ref, password);
        say(`password changed; ${count(ended, 'session')} ended`);
        // A new password does not remove a factor someone enrolled with the old one: show them.
        const factors = await describeAdminMfa(services, ref);
        if (factors.factors.length > 0) printFactorReport(factors);
      });
    });

  identify(admin.command('disable').description('disable an administrator and end their sessions')).action((options: AdminOptions) =>
    withServices(async (services) => {
      const ended = await setAdminEnabled(services, { schoolId: options.school, username: options.username }, false);
      say(`admin ${JSON.stringify(options.username)} disabled; ${count(ended, 'session')} ended`);
    }),
  );

  identify(admin.command('unlock').description('lift the lockout after too many failed logins')).action((options: AdminOptions) =>
    withServices(async (services) => {
      await unlockAdmin(services, { schoolId: options.school, username: options.username });
      say(`admin ${JSON.stringify(options.username)} unlocked`);
    }),
  );

  identify(admin.command('enable').description('enable a disabled administrator')).action((options: AdminOptions) =>
    withServices(async (services) => {
      await setAdminEnabled(services, { schoolId: options.school, username: options.username }, true);
      say(`admin ${JSON.stringify(options.username)} enabled`);
    }),
  );

  const email = admin.command('email').description("the address an admin is told of changes to their account at");
  identify(email.command('set').description("set (or with --remove, remove) the operator-given address"))
    .option('--email <address>', 'the address')
    .option('--remove', 'remove the address an operator gave')
    .action((options: AdminOptions & { email?: string; remove?: boolean }) =>
      withServices(async (services) => {
        if ((options.email === undefined) === (options.remove !== true)) throw new UsageError('give --email <address> or --remove');
        await setAdminEmail(services, { schoolId: options.school, username: options.username }, options.email ?? null);
        say(options.email === undefined ? `admin ${JSON.stringify(options.username)}: address removed` : `admin ${JSON.stringify(options.username)} is told at ${options.email.trim()}`);
      }),
    );

  identify(admin.command('reset-link').description('a one-time link for the admin to choose a new password (the operator never learns it)'))
    .option('--send', "mail it to the admin's addresses instead of printing it")
    .action((options: AdminOptions & { send?: boolean }) =>
      withServices(async (services) => {
        const handOver = await createRecoveryLink(services, { schoolId: options.school, username: options.username }, options.send === true);
        const minutes = Math.round(services.config.passwordRecovery.ttl / 60);
        if (handOver.sent) return say(`a recovery link was mailed to ${JSON.stringify(options.username)}; it works once, for ${minutes} minutes`);
        if (handOver.link !== undefined) return say(`give this link to ${JSON.stringify(options.username)} (it works once, for ${minutes} minutes):\n${handOver.link}`);
        say(`PASSWORD_RECOVERY_URL is not set, so here is the recovery code to give ${JSON.stringify(options.username)} (it works once, for ${minutes} minutes):\n${handOver.code}`);
      }),
    );

  admin
    .command('list')
    .description('list administrators')
    .option('--school <id>', 'only this school')
    .option('--json', 'print JSON')
    .action((options: { school?: string; json?: boolean }) =>
      withServices(async ({ db }) => {
        const schoolKey = options.school === undefined ? undefined : (await requireSchool(db, options.school)).key;
        const factors = describeFactorsByAdmin(await countConfirmedFactors(db));
        const emails = await emailsByAdmin(db);
        const rows = (await listAdmins(db, schoolKey)).map((row) => ({
          school_id: row.school_id,
          username: row.username,
          id: row.id,
          status: row.disabled_at === null ? 'enabled' : 'disabled',
          second_factor: factors.get(row.id) ?? 'none',
          email: emails.get(row.id)?.join(',') ?? null,
          created_at: isoSeconds(row.created_at),
          password_changed_at: isoSeconds(row.password_changed_at),
        }));
        printRows(rows, options.json === true, 'no administrators');
      }, 'none'),
    );

  registerAdminDataCommands(admin, identify);
  registerAdminMfaCommands(admin, identify);
  registerAdminSsoCommands(admin, identify);
}
