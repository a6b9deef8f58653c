import type { Clock } from '../runtime/clock.js';
import type { Config } from '../config/config.js';
import type { PasswordHasher } from './passwords/passwords.js';
import type { SealedSecretWatch } from './keys/sealed-secret-watch.js';
import type { SigningKeys } from './keys/signing-keys.js';
import type { Database, Db } from '../db/database.js';
import type { DatabaseOutageWatch } from '../db/outage-watch.js';
import type { Logger } from '../runtime/logger.js';
import type { OutboxCounts } from '../runtime/outbox-counts.js';

/**
 * The one bag of dependencies, built once by the server or a CLI command and passed down, so
 * tests choose the clock and the database. Queries always run on `db`; `database` is the
 * connection's lifecycle (readiness, pool statistics, closing), used only at the edges.
 */
export interface AppContext {
  readonly config: Config;
  readonly clock: Clock;
  readonly db: Db;
  readonly database: Database;
  readonly hasher: PasswordHasher;
  readonly keys: SigningKeys;
  /** Set once a sealed secret did not open with this instance's key file: 503 and not ready. */
  readonly sealedSecrets: SealedSecretWatch;
  /** Whether requests are being refused because the database is unavailable; logs each outage once. */
  readonly databaseOutage: DatabaseOutageWatch;
  readonly logger: Logger;
  /** What this instance's notification deliveries came to, for /metrics. */
  readonly outbox: OutboxCounts;
}
