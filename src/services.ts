import { pino } from 'pino';
import { systemClock, type Clock } from './runtime/clock.js';
import type { Config } from './config/config.js';
import type { AppContext } from './auth/context.js';
import { commonStoredHashParams } from './auth/passwords/hash-params.js';
import { PasswordHasher } from './auth/passwords/passwords.js';
import { listTotpSecretsThatOpen } from './auth/mfa/secret-box.js';
import { SealedSecretWatch } from './auth/keys/sealed-secret-watch.js';
import { listClientSecretsThatOpen } from './auth/sso/client-secret.js';
import { browserStateKey } from './auth/keys/browser-state-key.js';
import { SigningKeys } from './auth/keys/signing-keys.js';
import { connect } from './db/connect.js';
import type { Database } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { DatabaseOutageWatch } from './db/outage-watch.js';
import { checkReachable } from './db/open-problem.js';
import { requireMigrated } from './db/require-migrated.js';
import type { Logger } from './runtime/logger.js';
import { OutboxCounts } from './runtime/outbox-counts.js';

interface OpenOptions {
  readonly clock?: Clock;
  readonly database?: Database;
  /** The command line logs nothing: its output is for the operator. */
  readonly logger?: Logger;
  /**
   * What opening may change. `server` (the default, `serve`): apply migrations and create a
   * signing key of JWT_ALG when none signs. `migrate`: migrations only (commands that write
   * data). `none`: neither, and the schema must be current (read-only commands). Only the server
   * creates keys implicitly, so a shell with another JWT_ALG never adds one the server would sign with.
   */
  readonly prepare?: 'server' | 'migrate' | 'none';
}

/**
 * Opens the database, applies pending migrations and prepares keys and hashing: what both the
 * server and the command line need before they do anything.
 */
export async function openServices(config: Config, options: OpenOptions = {}): Promise<AppContext> {
  const database = options.database ?? connect(config);
  try {
    await checkReachable(database, config.databaseUrl);
    const prepare = options.prepare ?? 'server';
    if (prepare === 'none') await requireMigrated(database);
    else await migrateToLatest(database);
    const clock = options.clock ?? systemClock;
    const keys = new SigningKeys(database.db, config, clock);
    if (prepare === 'server') await keys.ensureKey();
    if (prepare === 'server') await listTotpSecretsThatOpen(database.db, config.keyEncryption);
    if (prepare === 'server') await listClientSecretsThatOpen(database.db, config.keyEncryption);
    if (prepare === 'server') await browserStateKey({ db: database.db, config });
    const hasher = await PasswordHasher.create(config.argon2, config.hashConcurrency, config.hashQueueLimit);
    // The server verifies logins: its dummy hash costs what most stored hashes cost.
    if (prepare === 'server') await hasher.matchDummyTo(await commonStoredHashParams(database.db));
    const logger = options.logger ?? pino({ level: 'silent' });
    const databaseOutage = new DatabaseOutageWatch({ database, clock, logger });
    return { database, db: database.db, config, clock, hasher, keys, sealedSecrets: new SealedSecretWatch(), databaseOutage, logger, outbox: new OutboxCounts() };
  } catch (error) {
    await database.close();
    throw error;
  }
}

/** Stops the hashing threads and the outage probe, and closes the database. */
export async function closeServices(context: Pick<AppContext, 'hasher' | 'database' | 'databaseOutage'>): Promise<void> {
  context.databaseOutage.stop();
  await context.hasher.close();
  await context.database.close();
}
