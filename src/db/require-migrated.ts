import { UsageError } from '../errors.js';
import type { Database } from './database.js';
import { LATEST_MIGRATION, isMigrated } from './migrate.js';
import { refuseNewerDatabase } from './newer-database.js';

/**
 * For commands that may not change the schema: refuses a database that lacks a migration this
 * version knows, telling the operator the one command that may apply it, and one that a newer
 * version migrated.
 */
export async function requireMigrated(database: Database): Promise<void> {
  await refuseNewerDatabase(database, LATEST_MIGRATION);
  if (await isMigrated(database)) return;
  throw new UsageError('the database schema is missing or out of date; apply it with: school-auth migrate');
}
