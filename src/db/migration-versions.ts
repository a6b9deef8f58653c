import { sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { dialectOf, type Db } from './database.js';

/**
 * Which release of school-auth applied each migration, so that an older release meeting
 * migrations it does not know can name the release to run instead (newer-database.ts). The table
 * is bookkeeping like Kysely's own and stays outside the numbered migrations: every release must
 * be able to read it, whichever migrations it knows.
 */
const TABLE = 'migration_versions';

// A type alias, not an interface: Kysely's withTables needs the index signature aliases have.
type VersionTable = { readonly [TABLE]: { readonly migration: string; readonly version: string } };

interface AppliedMigration {
  readonly name: string;
  /** The release that applied it; undefined when it was applied before releases were recorded. */
  readonly version: string | undefined;
}

/** The same migrations, each also recording `version` in its own transaction (on PostgreSQL). */
export function recordingVersions(provider: MigrationProvider, version: string): MigrationProvider {
  return {
    getMigrations: async () => {
      const migrations = await provider.getMigrations();
      return Object.fromEntries(Object.entries(migrations).map(([name, migration]) => [name, recording(name, migration, version)]));
    },
  };
}

function recording(name: string, migration: Migration, version: string): Migration {
  return {
    ...migration,
    up: async (db: Kysely<unknown>) => {
      await migration.up(db);
      await db.schema
        .createTable(TABLE)
        .ifNotExists()
        .addColumn('migration', 'text', (col) => col.primaryKey())
        .addColumn('version', 'text', (col) => col.notNull())
        .execute();
      await db
        .withTables<VersionTable>()
        .insertInto(TABLE)
        .values({ migration: name, version })
        .onConflict((conflict) => conflict.column('migration').doUpdateSet({ version }))
        .execute();
    },
  };
}

/**
 * The migrations the database records as applied, with the release that applied each when it is
 * known; none for a new database. Only reads: Kysely's Migrator would create its tables first.
 */
export async function appliedMigrations(db: Db): Promise<AppliedMigration[]> {
  if (!(await hasTable(db, 'kysely_migration'))) return [];
  const applied = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  const recorded = (await hasTable(db, TABLE)) ? (await sql<{ migration: string; version: string }>`select migration, version from migration_versions`.execute(db)).rows : [];
  const versions = new Map(recorded.map((row) => [row.migration, row.version]));
  return applied.rows.map(({ name }) => ({ name, version: versions.get(name) }));
}

/**
 * Whether the table exists in our schema. On PostgreSQL that is current_schema(), where Kysely
 * keeps its bookkeeping (migrate.ts), and the first schema an unqualified name is looked up in.
 */
async function hasTable(db: Db, name: string): Promise<boolean> {
  const query =
    dialectOf(db) === 'postgres'
      ? sql<{ found: number }>`select 1 as found from pg_catalog.pg_tables where schemaname = current_schema() and tablename = ${name}`
      : sql<{ found: number }>`select 1 as found from sqlite_master where type = 'table' and name = ${name}`;
  return (await query.execute(db)).rows.length > 0;
}
