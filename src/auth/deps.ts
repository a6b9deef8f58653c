import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { PasswordHasher } from './passwords.js';
import type { SigningKeys } from './signing-keys.js';

/** What the domain needs, passed in rather than imported, so tests choose the clock and database. */
export interface AuthDeps {
  readonly db: Db;
  readonly config: Config;
  readonly clock: Clock;
  readonly hasher: PasswordHasher;
  readonly keys: SigningKeys;
}
