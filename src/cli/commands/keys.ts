import type { Command } from 'commander';
import { CLI_CONTEXT, recordEvent } from '../../auth/events.js';
import { encryptStoredSecrets } from '../../auth/key-encryption-upgrade.js';
import { revokeSigningKey } from '../../auth/keys/key-revocation.js';
import { createSigningKey, describeSigningKeys } from '../../auth/keys/signing-keys.js';
import { nowSeconds } from '../../runtime/clock.js';
import { isoSeconds, printRows } from '../output.js';
import { count } from '../plural.js';
import { say, withServices } from '../run.js';

export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('manage the keys that sign access tokens');

  keys
    .command('list')
    .description('list signing keys and where each stands')
    .option('--json', 'print JSON')
    .action((options: { json?: boolean }) =>
      withServices(async ({ db, config, clock }) => {
        const rows = (await describeSigningKeys(db, config, clock)).map(({ row, state, supersededAt }) => ({
          kid: row.kid,
          alg: row.alg,
          state,
          created_at: isoSeconds(row.created_at),
          signs_from: isoSeconds(row.active_from),
          signs_until: isoSeconds(supersededAt ?? null),
        }));
        printRows(rows, options.json === true, 'no signing keys');
      }, 'none'),
    );

  keys
    .command('rotate')
    .description('publish a new signing key now; it starts signing after KEY_ACTIVATION_DELAY seconds')
    .action(() =>
      withServices(async ({ db, config, clock }) => {
        const now = nowSeconds(clock);
        const created = await createSigningKey(db, config.jwtAlg, now, now + config.keyActivationDelay, config.keyEncryption);
        await recordEvent(db, clock, CLI_CONTEXT, { type: 'keys.rotated', detail: `new key ${created.kid} signs from ${isoSeconds(created.active_from)}` });
        say(
          `new ${created.alg} key ${created.kid} published; it signs from ${isoSeconds(created.active_from)}. ` +
            `The previous key stays published until its tokens have expired.`,
        );
      }),
    );

  keys
    .command('revoke <kid>')
    .description('withdraw a key at once (after a leak): a new key signs now, tokens of the revoked key stop verifying')
    .action((kid: string) =>
      withServices(async (context) => {
        const { replacement } = await revokeSigningKey(context, kid);
        const next = replacement === undefined ? '' : ` New ${replacement.alg} key ${replacement.kid} signs now.`;
        say(
          `key ${kid} revoked: every instance stops signing with it, accepting its tokens and publishing it ` +
            `within KEY_CACHE_SECONDS (${context.config.keyCacheSeconds} s).${next}`,
        );
      }),
    );

  keys
    .command('encrypt')
    .description('encrypt the private keys, TOTP secrets and SSO client secrets still stored in plaintext under KEY_ENCRYPTION_KEY_FILE (safe to run again)')
    .action(() =>
      withServices(async (context) => {
        const { encrypted, alreadyEncrypted, sealedTotp, alreadySealedTotp, sealedClientSecrets } = await encryptStoredSecrets(context);
        const file = context.config.keyEncryption?.file ?? '';
        const done: string[] = [];
        if (encrypted.length > 0) done.push(`encrypted ${count(encrypted.length, 'signing key')} under ${file}: ${encrypted.join(', ')}`);
        if (sealedTotp > 0) done.push(`sealed ${count(sealedTotp, 'TOTP secret')} under ${file}`);
        if (sealedClientSecrets > 0) done.push(`sealed ${count(sealedClientSecrets, 'SSO client secret')} under ${file}`);
        if (done.length === 0) {
          const secrets = alreadySealedTotp === 0 ? '' : ` and ${count(alreadySealedTotp, 'TOTP secret')}`;
          say(`nothing to do: ${count(alreadyEncrypted, 'signing key')}${secrets} already encrypted under ${file}`);
          return;
        }
        say(`${done.join('; ')}. Every instance must now start with this KEY_ENCRYPTION_KEY_FILE.`);
      }),
    );
}
