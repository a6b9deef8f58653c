import type { Command } from 'commander';
import type { Config } from '../../config/config.js';
import { loadConfigWithNotices } from '../../config/setting-notices.js';
import { describeSettings, type SettingValue } from '../../config/settings-view.js';
import { UsageError } from '../../errors.js';
import { say } from '../run.js';

/** What `config check` prints: each applying setting under its variable's name, secrets masked. */
export function describeConfig(config: Config): Record<string, SettingValue> {
  return describeSettings(config);
}

export function registerConfigCommands(program: Command): void {
  const config = program.command('config').description('inspect the configuration');
  config
    .command('check')
    .description('validate the environment (and .env) and print the settings that apply, by variable name, secrets masked')
    .option('--strict', 'exit 1 when a variable or a .env line looks like a mistyped setting')
    .action((options: { strict?: boolean }) => {
      const { config, notices } = loadConfigWithNotices();
      for (const notice of notices) process.stderr.write(`school-auth: ${notice.text}\n`);
      say(JSON.stringify(describeConfig(config), null, 2));
      if (options.strict === true && notices.length > 0) {
        throw new UsageError(`--strict: ${notices.length === 1 ? 'the problem' : `the ${notices.length} problems`} above must be fixed`);
      }
    });
}
