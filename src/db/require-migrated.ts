import { UsageError } from '../errors.js';
import type { Database } from './database.js';
import { isMigrated } from './migrate.js';

/**
 * For commands that may not change the schema: refuses a database that lacks a migration this
 * version knows, telling the operator the one command that may apply it.
 */
export async function requireMigrated(database: Database): Promise<void> {
  if (await isMigrated(database)) return;
  throw new UsageError('the database schema is missing or out of date; apply it with: school-auth migrate');
}
