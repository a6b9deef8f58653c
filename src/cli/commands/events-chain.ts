import { existsSync } from 'node:fs';
import { once } from 'node:events';
import type { Command } from 'commander';
import { followSealedEvents, sealedEventLines } from '../../auth/audit/sealed-stream.js';
import { verifyTrail } from '../../auth/audit/verify-trail.js';
import { readSealer } from '../../db/queries/audit-sealing.js';
import { UsageError } from '../../errors.js';
import { exportRange, parseBound } from '../event-bounds.js';
import { say, withServices } from '../run.js';
import { count } from '../plural.js';

/** Writes lines to stdout, waiting when the pipe is full, so memory stays flat. */
async function writeLines(lines: AsyncIterable<string>): Promise<void> {
  for await (const line of lines) {
    if (!process.stdout.write(`${line}\n`)) await once(process.stdout, 'drain');
  }
}

/** `events verify`, `events export`, `events follow`: the sealed chain (docs/audit-trail.md). */
export function registerEventChainCommands(events: Command): void {
  // The listing's --since/--until are its own: `events export --since` is export's (main.ts enables this on the program too).
  events.enablePositionalOptions();
  events
    .command('verify')
    .description('check the sealed chain and its signed checkpoints; exit 1 naming the first thing tampered with')
    .option('--against <file>', 'also compare with checkpoints kept elsewhere (the shipped log lines)')
    .action((options: { against?: string }) => {
      if (options.against !== undefined && !existsSync(options.against)) throw new UsageError(`--against: no file ${JSON.stringify(options.against)}`);
      return withServices(async ({ db }) => {
        const verdict = await verifyTrail(db, options.against);
        if (!verdict.ok) {
          process.stdout.write(`TAMPERED: ${verdict.problem}\n`);
          process.exitCode = 1;
          return;
        }
        const { report } = verdict;
        say(`ok: ${count(report.events, 'sealed event')} and ${count(report.checkpoints, 'checkpoint')} checked${report.prunedThrough > 0 ? ` (pruned through seq ${report.prunedThrough})` : ''}`);
        if (report.shipped !== undefined) say(`ok: ${count(report.shipped, 'shipped checkpoint')} in ${options.against} match the database`);
        if (report.withdrawnLater > 0) {
          say(`note: ${count(report.withdrawnLater, 'checkpoint')} signed with a key withdrawn later (keys revoke): a later checkpoint or a shipped copy vouches for them, their own signature no longer does`);
        }
      }, 'none');
    });

  events
    .command('export')
    .description('stream sealed events as JSON lines with seq and hash, in sequence order')
    .requiredOption('--since <seq|time>', 'from this sequence number or ISO 8601 time')
    .option('--until <seq|time>', 'through this sequence number, or before this ISO 8601 time')
    .action((options: { since: string; until?: string }) => {
      const range = exportRange(parseBound(options.since, '--since'), options.until === undefined ? undefined : parseBound(options.until, '--until'));
      return withServices(({ db }) => writeLines(sealedEventLines(db, range)), 'none');
    });

  events
    .command('follow')
    .description('print events as they are sealed, as JSON lines, until interrupted')
    .option('--since <seq>', 'start after this sequence number (default: the latest sealed)')
    .action((options: { since?: string }) => {
      const since = options.since === undefined ? undefined : parseBound(options.since, '--since');
      if (since !== undefined && !('seq' in since)) throw new UsageError('--since of events follow takes a sequence number');
      return withServices(async ({ db }) => {
        const stop = new AbortController();
        for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
        const afterSeq = since === undefined ? (await readSealer(db)).seq : since.seq - 1;
        await writeLines(followSealedEvents(db, afterSeq, stop.signal));
      }, 'none');
    });
}
