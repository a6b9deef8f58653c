import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { LATEST_MIGRATION, migrateToLatest } from '../../src/db/migrate.js';
import { appliedMigrations } from '../../src/db/migration-versions.js';
import { requireMigrated } from '../../src/db/require-migrated.js';
import { StartupError } from '../../src/errors.js';
import { PACKAGE_VERSION } from '../../src/package-version.js';
import { TEST_DIALECTS, createTestDatabase } from '../helpers/database.js';

/** Records `name` as applied by `version`, as a newer release would have. */
async function applyAsNewer(database: Database, name: string, version: string): Promise<void> {
  await sql`insert into kysely_migration (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(database.db);
  await sql`insert into migration_versions (migration, version) values (${name}, ${version})`.execute(database.db);
}

describe.each(TEST_DIALECTS)('migration versions on %s', (dialect) => {
  it('records the release that applied each migration; a new database records none and gains no table', async () => {
    const database = await createTestDatabase(dialect);
    try {
      expect(await appliedMigrations(database.db)).toEqual([]);
      await expect(requireMigrated(database)).rejects.toThrow(/schema is missing or out of date/);
      expect(await appliedMigrations(database.db)).toEqual([]);
      const applied = await migrateToLatest(database);
      const recorded = await appliedMigrations(database.db);
      expect(recorded.map((migration) => migration.name).sort()).toEqual(applied);
      expect(new Set(recorded.map((migration) => migration.version))).toEqual(new Set([PACKAGE_VERSION]));
    } finally {
      await database.close();
    }
  });

  it('refuses migrations a newer release applied, naming them all and the release of the newest', async () => {
    const database = await createTestDatabase(dialect);
    try {
      await migrateToLatest(database);
      await applyAsNewer(database, '095-later-still', '3.0.0');
      await applyAsNewer(database, '090-later', '2.0.0');
      const refusal = {
        exitCode: 5,
        message:
          `the database was migrated by school-auth 3.0.0 (migrations 090-later, 095-later-still); this is school-auth ${PACKAGE_VERSION}, ` +
          `which knows migrations up to ${LATEST_MIGRATION}. Nothing was changed: run school-auth 3.0.0 or later, or restore the backup ` +
          'taken before the upgrade (docs/deploy.md, "Upgrade and rollback")',
      };
      await expect(migrateToLatest(database)).rejects.toBeInstanceOf(StartupError);
      await expect(migrateToLatest(database)).rejects.toMatchObject(refusal);
      await expect(requireMigrated(database)).rejects.toMatchObject(refusal);
    } finally {
      await database.close();
    }
  });
});
