import type { Command } from 'commander';
import { findMessage, requeueMessage } from '../../db/queries/outbox.js';
import { listDeliveries } from '../../db/queries/outbox-attempts.js';
import { listWebhooks } from '../../db/queries/webhooks.js';
import { addWebhook, removeWebhook, rotateWebhookSecret } from '../../delivery/webhooks.js';
import { UsageError } from '../../errors.js';
import { printRows } from '../output.js';
import { say, withServices } from '../run.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

export function registerWebhookCommands(program: Command): void {
  const webhooks = program.command('webhooks').description('signed webhooks to the platform, and every notification delivery');

  webhooks
    .command('add')
    .description('send events to an https endpoint, signed (Standard Webhooks); prints the secret once')
    .requiredOption('--url <url>', 'the endpoint (https)')
    .option('--events <types>', 'comma-separated event types (default: all)')
    .option('--school <id>', "only this school's events (default: every school's, and keys.revoked)")
    .action((options: { url: string; events?: string; school?: string }) =>
      withServices(async (services) => {
        const { id, secret } = await addWebhook(services, { url: options.url, events: options.events, schoolId: options.school });
        say(`webhook ${id} added; its signing secret (shown once, give it to the receiver):\n${secret}`);
      }),
    );

  webhooks
    .command('list')
    .description('list the webhooks (never their secrets)')
    .option('--json', 'print JSON')
    .action((options: { json?: boolean }) =>
      withServices(async ({ db, clock }) => {
        const rows = (await listWebhooks(db)).map((row) => ({
          id: row.id,
          url: row.url,
          events: row.events,
          school: row.school_key ?? '*',
          previous_secret_until: row.previous_until !== null && row.previous_until > clock.now() ? iso(row.previous_until) : null,
          created_at: iso(row.created_at),
        }));
        printRows(rows, options.json === true, 'no webhooks');
      }, 'none'),
    );

  webhooks
    .command('remove <id>')
    .description('stop sending to a webhook (its waiting messages become dead letters)')
    .action((id: string) =>
      withServices(async (services) => {
        await removeWebhook(services, id);
        say(`webhook ${id} removed`);
      }),
    );

  webhooks
    .command('rotate-secret <id>')
    .description('a new signing secret, printed once; the old one also signs for 24 hours')
    .action((id: string) =>
      withServices(async (services) => {
        const secret = await rotateWebhookSecret(services, id);
        say(`webhook ${id}: new signing secret (the old one also signs for 24 hours):\n${secret}`);
      }),
    );

  webhooks
    .command('deliveries')
    .description('the newest notifications (webhooks and e-mail) and every attempt to deliver each')
    .option('--failed', 'only dead letters, dropped messages and messages being retried')
    .option('--channel <channel>', 'webhook or email')
    .option('--limit <n>', 'at most this many messages', '50')
    .option('--json', 'print JSON')
    .action((options: { failed?: boolean; channel?: string; limit: string; json?: boolean }) =>
      withServices(async ({ db }) => {
        if (options.channel !== undefined && options.channel !== 'webhook' && options.channel !== 'email') throw new UsageError('--channel: webhook or email');
        const limit = Number(options.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit: a whole number from 1 to 10000');
        const listed = await listDeliveries(db, { failedOnly: options.failed === true, channel: options.channel, limit });
        const rows = listed.map(({ message, attempts }) => ({
          id: message.id,
          type: message.type,
          channel: message.channel,
          target: message.target,
          state: message.state,
          created_at: iso(message.created_at),
          next_attempt_at: message.state === 'pending' ? iso(message.next_attempt_at) : null,
          attempts: attempts.map((attempt) => `${iso(attempt.at)} ${attempt.ok === 1 ? 'ok' : 'failed'}${attempt.status === null ? '' : ` ${attempt.status}`}${attempt.error === null ? '' : ` ${attempt.error}`}`),
        }));
        printRows(rows, options.json === true, options.failed === true ? 'no failed deliveries' : 'no deliveries');
      }, 'none'),
    );

  webhooks
    .command('redeliver <id>')
    .description('send a message again now (a dead letter, or one already delivered)')
    .action((id: string) =>
      withServices(async ({ db, clock }) => {
        const message = await findMessage(db, id);
        if (message === undefined) throw new UsageError(`no message ${JSON.stringify(id)}; see webhooks deliveries`);
        if (message.state === 'pending') throw new UsageError(`message ${id} is still being delivered (next attempt ${iso(message.next_attempt_at)})`);
        await requeueMessage(db, id, clock.now());
        say(`message ${id} queued again; the server sends it within 30 s`);
      }),
    );
}
