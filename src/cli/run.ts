import { loadConfig, loadDotEnv } from '../config/config.js';
import type { AppContext } from '../auth/context.js';
import { closeServices, openServices } from '../services.js';

/**
 * Opens the configured database, runs one command, and always closes it. Commands that write
 * data apply pending migrations (`migrate`); read-only ones (`none`) change nothing and refuse an
 * unmigrated database. No command creates a signing key here: only `serve` and `keys` do.
 */
export async function withServices<T>(action: (services: AppContext) => Promise<T>, prepare: 'migrate' | 'none' = 'migrate'): Promise<T> {
  loadDotEnv();
  const services = await openServices(loadConfig(), { prepare });
  try {
    return await action(services);
  } finally {
    await closeServices(services);
  }
}

export function say(message: string): void {
  process.stdout.write(`${message}\n`);
}
