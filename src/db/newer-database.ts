import { EXIT_CODES, StartupError } from '../errors.js';
import { PACKAGE_VERSION } from '../package-version.js';
import type { Database } from './database.js';
import { appliedMigrations } from './migration-versions.js';

const ROLLBACK = 'restore the backup taken before the upgrade (docs/deploy.md, "Upgrade and rollback")';

/**
 * Refuses a database that a newer release migrated (it records migrations after `latest`, the
 * newest this release knows), before anything is changed: migrations go forward only, so this
 * release cannot know what the newer schema means. Left to Kysely, migrating would stop later
 * as a bug with a stack trace, and read-only commands would read a schema they do not know.
 */
export async function refuseNewerDatabase(database: Database, latest: string): Promise<void> {
  // Compared as Kysely orders migration names: by UTF-16 code units.
  const unknown = (await appliedMigrations(database.db)).filter((migration) => migration.name > latest).sort((a, b) => (a.name < b.name ? -1 : 1));
  const newest = unknown.at(-1);
  if (newest === undefined) return;
  const names = `${unknown.length === 1 ? 'migration' : 'migrations'} ${unknown.map((migration) => migration.name).join(', ')}`;
  const migratedBy = newest.version === undefined ? 'a newer school-auth' : `school-auth ${newest.version}`;
  const runInstead = newest.version === undefined ? 'that newer version' : `school-auth ${newest.version} or later`;
  throw new StartupError(
    `the database was migrated by ${migratedBy} (${names}); this is school-auth ${PACKAGE_VERSION}, which knows migrations up to ${latest}. ` +
      `Nothing was changed: run ${runInstead}, or ${ROLLBACK}`,
    EXIT_CODES.databaseNewer,
  );
}
