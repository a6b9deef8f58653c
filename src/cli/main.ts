#!/usr/bin/env -S node --max-semi-space-size=4 --heap-growing-percent=50
// The one place the service's V8 options are written: `npm start`, the container's entry point and
// the systemd unit all run this file itself, so this line applies to every one of them. Left to
// itself, V8 grows the young generation to 16 MiB per semi-space and lets the old one reach up to
// four times its live size before collecting, which costs memory under load for no measurable
// throughput (bench/README.md, the ledger).
import { CommanderError } from 'commander';
import { ConfigError, loadConfig, loadDotEnv } from '../config/config.js';
import { loadConfigWithNotices } from '../config/setting-notices.js';
import { connect } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import { checkReachable } from '../db/open-problem.js';
import { EXIT_CODES, StartupError, UsageError } from '../errors.js';
import { PACKAGE_VERSION } from '../package-version.js';
import { createLogger } from '../runtime/logger.js';
import { serve } from '../server.js';
import { registerAdminCommands } from './commands/admins.js';
import { registerBackupCommand } from './commands/backup.js';
import { registerConfigCommands } from './commands/config.js';
import { registerEventCommands } from './commands/events.js';
import { registerKeyCommands } from './commands/keys.js';
import { registerPruneCommand } from './commands/prune.js';
import { registerSchoolCommands } from './commands/schools.js';
import { registerScimCommands } from './commands/scim.js';
import { registerSessionCommands } from './commands/sessions.js';
import { OperatorCommand } from './operator-command.js';
import { registerSsoCommands } from './commands/sso.js';
import { registerWebhookCommands } from './commands/webhooks.js';
import { say } from './run.js';

const program = new OperatorCommand('school-auth')
  .description('Authentication service for school administrators')
  .version(PACKAGE_VERSION, '-V, --version', 'print the version of school-auth')
  // The program's own options (--version) only before the command: `keys revoke -V...` names a kid.
  .enablePositionalOptions()
  .exitOverride()
  .showHelpAfterError(false)
  // A command's options are its own: `events --since` (the listing) and `events export --since`.
  .enablePositionalOptions();

program
  .command('serve')
  .description('start the HTTP service (SQLite under DATA_DIR, or DATABASE_URL)')
  .action(async () => {
    const { config, notices } = loadConfigWithNotices();
    const logger = createLogger(config.logLevel);
    for (const { line, variable, text } of notices) logger.warn({ line, variable }, text);
    await serve(config, logger);
  });

program
  .command('migrate')
  .description('create or upgrade the database schema')
  .action(async () => {
    loadDotEnv();
    const config = loadConfig();
    const database = connect(config, { checkPages: true });
    try {
      await checkReachable(database, config.databaseUrl);
      const applied = await migrateToLatest(database);
      say(applied.length === 0 ? 'database is up to date' : `applied: ${applied.join(', ')}`);
    } finally {
      await database.close();
    }
  });

registerSchoolCommands(program);
registerAdminCommands(program);
registerSessionCommands(program);
registerSsoCommands(program);
registerWebhookCommands(program);
registerScimCommands(program);
registerKeyCommands(program);
registerEventCommands(program);
registerConfigCommands(program);
registerPruneCommand(program);
registerBackupCommand(program);

/** Errors a person can act on are printed plainly; anything else is a bug and shows its stack. */
function fail(error: unknown): never {
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : EXIT_CODES.invocation);
  if (error instanceof StartupError) {
    process.stderr.write(`school-auth: ${error.message}\n`);
    process.exit(error.exitCode);
  }
  if (error instanceof UsageError || error instanceof ConfigError) {
    process.stderr.write(`school-auth: ${error.message}\n`);
    process.exit(EXIT_CODES.refused);
  }
  process.stderr.write(`school-auth: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(EXIT_CODES.internal);
}

program.parseAsync(process.argv).catch(fail);
