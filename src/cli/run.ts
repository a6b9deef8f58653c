import { loadConfig, loadDotEnv } from '../config.js';
import type { AppContext } from '../context.js';
import { closeServices, openServices } from '../services.js';

/** Opens the configured database (migrating it), runs one command, and always closes it. */
export async function withServices<T>(action: (services: AppContext) => Promise<T>): Promise<T> {
  loadDotEnv();
  const services = await openServices(loadConfig());
  try {
    return await action(services);
  } finally {
    await closeServices(services);
  }
}

export function say(message: string): void {
  process.stdout.write(`${message}\n`);
}
