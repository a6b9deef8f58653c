import type { Command } from 'commander';
import { loadConfig, loadDotEnv, type Config } from '../../config.js';
import { say } from '../run.js';

/** The password of a database URL never reaches a terminal or a log. */
export function maskDatabaseUrl(url: string | undefined): string | null {
  if (url === undefined) return null;
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '****';
    return parsed.toString();
  } catch {
    return '****';
  }
}

export function describeConfig(config: Config): Record<string, unknown> {
  return { ...config, databaseUrl: maskDatabaseUrl(config.databaseUrl) };
}

export function registerConfigCommands(program: Command): void {
  const config = program.command('config').description('inspect the configuration');
  config
    .command('check')
    .description('validate the environment (and .env) and print the effective configuration, secrets masked')
    .action(() => {
      loadDotEnv();
      say(JSON.stringify(describeConfig(loadConfig()), null, 2));
    });
}
