import type { Command } from 'commander';
import { createScimToken, listTokens, revokeScimToken } from '../../auth/scim/scim-tokens.js';
import { printRows } from '../output.js';
import { say, withServices } from '../run.js';

const iso = (seconds: number | null) => (seconds === null ? null : new Date(Number(seconds) * 1000).toISOString());

export function registerScimCommands(program: Command): void {
  const scim = program.command('scim').description("directory provisioning (SCIM 2.0) at <PUBLIC_URL>/scim/v2: the directory's tokens");
  const token = scim.command('token').description("a school's SCIM bearer tokens (several per school, for rotation)");

  token
    .command('create')
    .description("a new token for the school's directory; printed once, stored as a digest")
    .requiredOption('--school <id>', 'the school the token acts on (and only that one)')
    .option('--label <text>', 'what the token is for, e.g. "Entra ID"')
    .action((options: { school: string; label?: string }) =>
      withServices(async (services) => {
        const { id, token: secret } = await createScimToken(services, options.school, options.label);
        say(`SCIM token ${id} created for school ${JSON.stringify(options.school)}; the token (shown once, give it to the directory):\n${secret}`);
      }),
    );

  token
    .command('list')
    .description('list the SCIM tokens (never the tokens themselves)')
    .option('--school <id>', "only this school's")
    .option('--json', 'print JSON')
    .action((options: { school?: string; json?: boolean }) =>
      withServices(async (services) => {
        const rows = (await listTokens(services, options.school)).map((row) => ({
          id: row.id,
          school: row.school_id,
          label: row.label,
          created_at: iso(row.created_at),
          last_used_at: iso(row.last_used_at),
        }));
        printRows(rows, options.json === true, 'no SCIM tokens');
      }, 'none'),
    );

  token
    .command('revoke <id>')
    .description('revoke a token at once: the next request with it is refused')
    .action((id: string) =>
      withServices(async (services) => {
        await revokeScimToken(services, id);
        say(`SCIM token ${id} revoked`);
      }),
    );
}
