import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadConfig, loadDotEnv } from '../../config/config.js';
import { backupSqlite } from '../../db/backup.js';
import { describeDatabase } from '../../db/database-target.js';
import { UsageError } from '../../errors.js';
import { say } from '../run.js';

export function registerBackupCommand(program: Command): void {
  program
    .command('backup <file>')
    .description('copy the SQLite database to a new FILE (0600) while the service runs; PostgreSQL: use pg_dump')
    .action(async (file: string) => {
      loadDotEnv();
      const database = describeDatabase(loadConfig());
      if (database.kind !== 'sqlite') {
        throw new UsageError('backup copies the SQLite database only; on PostgreSQL use pg_dump, e.g. pg_dump --format=custom --file=FILE "$DATABASE_URL" (docs/operations.md)');
      }
      const target = resolve(file);
      if (!existsSync(database.file)) throw new UsageError(`there is no database at ${database.file} (DATA_DIR) to back up`);
      if (existsSync(target)) throw new UsageError(`${target} already exists; backup never overwrites a file: name a new one`);
      const { bytes } = await backupSqlite(database.file, target).catch((error: unknown) => {
        if ((error as { code?: unknown }).code === 'EEXIST') throw new UsageError(`${target} already exists; backup never overwrites a file: name a new one`);
        if ((error as { code?: unknown }).code === 'ENOENT') throw new UsageError(`cannot write ${target}: its directory does not exist`);
        throw error;
      });
      say(`backup of ${database.file} written to ${target} (${bytes} bytes)`);
    });
}
