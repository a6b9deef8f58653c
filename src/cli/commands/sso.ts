import type { Command } from 'commander';
import { linkAdmin, unlinkAdmin, type LinkTarget } from '../../auth/sso/links.js';
import { describeSso, removeSso, setSso } from '../../auth/sso/settings.js';
import { UsageError } from '../../errors.js';
import { printRows } from '../output.js';
import { readSecret } from '../password-input.js';
import { say, withServices } from '../run.js';

interface SetOptions {
  provider: string;
  clientId: string;
  clientSecretStdin?: boolean;
  issuer?: string;
  domains?: string;
  tenant?: string;
  district?: string;
  passwordLogin?: string;
  trustIdpMfa?: boolean;
}

/** `school-auth sso set|show|remove`: a school's identity provider (docs/sso.md). */
export function registerSsoCommands(program: Command): void {
  const sso = program.command('sso').description("sign-in with a school's identity provider (OpenID Connect)");

  sso
    .command('set <school_id>')
    .description('set (or replace) the identity provider of a school; the client secret is read from stdin or a prompt, never argv')
    .requiredOption('--provider <name>', 'google, microsoft, clever, classlink or oidc')
    .requiredOption('--client-id <id>', 'the client id registered at the IdP')
    .option('--client-secret-stdin', 'read the client secret from standard input instead of a prompt')
    .option('--issuer <url>', 'the IdP issuer URL (classlink, oidc; others have a fixed one)')
    .option('--domains <list>', 'comma-separated domains: google hd; others the email domain')
    .option('--tenant <guid>', 'microsoft: the directory (tenant) id')
    .option('--district <id>', 'clever: the district id')
    .option('--password-login <on|off>', "off: the school's admins sign in only through the IdP", 'on')
    .option('--trust-idp-mfa', "an MFA the IdP reports in amr counts as our second factor (aal2)")
    .action(async (schoolId: string, options: SetOptions) => {
      const clientSecret = await readSecret(options.clientSecretStdin === true, 'Client secret: ');
      await withServices(async (services) => {
        const row = await setSso(services, schoolId, { ...options, clientSecret });
        say(`school ${JSON.stringify(schoolId)}: single sign-on with ${row.provider} (${row.issuer}); password sign-in ${row.password_login === 1 ? 'on' : 'off'}`);
        say(`register this redirect URI at the IdP: ${services.config.sso.publicUrl}/admin/auth/sso/callback`);
      });
    });

  sso
    .command('show <school_id>')
    .description("show a school's identity provider (never its client secret)")
    .option('--json', 'print JSON')
    .action((schoolId: string, options: { json?: boolean }) =>
      withServices(async (services) => {
        const described = await describeSso(services, schoolId);
        printRows([{ ...described, domains: described.domains.join(',') }], options.json === true, '');
      }, 'none'),
    );

  sso
    .command('remove <school_id>')
    .description("remove a school's identity provider (admins' links stay, unused)")
    .action((schoolId: string) =>
      withServices(async (services) => {
        await removeSso(services, schoolId);
        say(`school ${JSON.stringify(schoolId)}: single sign-on removed`);
      }),
    );
}

/** `admin sso link|unlink --school S --username U (--email E | --subject SUB)`, under the `admin` command. */
export function registerAdminSsoCommands(admin: Command, identify: (command: Command) => Command): void {
  const sso = admin.command('sso').description('link an administrator to an identity at the school’s IdP');

  identify(sso.command('link').description('link by --email (binds at the first verified sign-in) or --subject (binds now)'))
    .option('--email <email>', 'the email the IdP reports, verified')
    .option('--subject <sub>', "the IdP's subject (sub) for this person")
    .action((options: { school: string; username: string; email?: string; subject?: string }) =>
      withServices(async (services) => {
        const target = linkTargetOf(options);
        await linkAdmin(services, { schoolId: options.school, username: options.username }, target);
        say(`admin ${JSON.stringify(options.username)} linked to ${'email' in target ? target.email : `subject ${target.subject}`}`);
      }),
    );

  identify(sso.command('unlink').description('remove the link: the admin no longer signs in through the IdP')).action(
    (options: { school: string; username: string }) =>
      withServices(async (services) => {
        await unlinkAdmin(services, { schoolId: options.school, username: options.username });
        say(`admin ${JSON.stringify(options.username)} unlinked`);
      }),
  );
}

function linkTargetOf(options: { email?: string; subject?: string }): LinkTarget {
  if ((options.email === undefined) === (options.subject === undefined)) throw new UsageError('give exactly one of --email or --subject');
  return options.email !== undefined ? { email: options.email } : { subject: options.subject ?? '' };
}
