import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import type { AuthDeps } from './auth/deps.js';
import { PasswordHasher } from './auth/passwords.js';
import { SigningKeys } from './auth/signing-keys.js';
import { connect } from './db/connect.js';
import type { Database } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';

export interface Services extends AuthDeps {
  readonly database: Database;
}

/**
 * Opens the database, applies pending migrations and prepares keys and hashing: what both the
 * server and the command line need before they do anything.
 */
export async function openServices(config: Config, clock: Clock = systemClock, database: Database = connect(config)): Promise<Services> {
  try {
    await migrateToLatest(database);
    const keys = new SigningKeys(database.db, config, clock);
    await keys.ensureKey();
    const hasher = await PasswordHasher.create(config.argon2, config.hashConcurrency, config.hashQueueLimit);
    return { database, db: database.db, config, clock, hasher, keys };
  } catch (error) {
    await database.close();
    throw error;
  }
}

/** Stops the hashing threads and closes the database. */
export async function closeServices(services: Pick<Services, 'hasher' | 'database'>): Promise<void> {
  await services.hasher.close();
  await services.database.close();
}
