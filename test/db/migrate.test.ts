import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectPostgres, connectSqlite } from '../../src/db/connect.js';
import type { Database } from '../../src/db/database.js';
import { LATEST_MIGRATION, isMigrated, migrateToLatest } from '../../src/db/migrate.js';
import { REPO_ROOT, runCli } from '../helpers/cli-run.js';
import { TEST_DIALECTS, createPostgresDatabase, createTestDatabase } from '../helpers/database.js';

describe.each(TEST_DIALECTS)('migrations on %s', (dialect) => {
  it('reports an empty database as not migrated, then as migrated', async () => {
    const database = await createTestDatabase(dialect);
    try {
      expect(await isMigrated(database)).toBe(false);
      const applied = await migrateToLatest(database);
      expect(applied.at(-1)).toBe(LATEST_MIGRATION);
      expect(await isMigrated(database)).toBe(true);
      expect(await migrateToLatest(database)).toEqual([]);
    } finally {
      await database.close();
    }
  });
});

describe.runIf(TEST_DIALECTS.includes('postgres'))('migrations started by several instances at once', () => {
  it('are applied exactly once while the others wait', async () => {
    const target = await createPostgresDatabase();
    const instances: Database[] = Array.from({ length: 5 }, () => connectPostgres(target.url));
    try {
      const results = await Promise.all(instances.map((instance) => migrateToLatest(instance)));
      const applied = results.flat();
      expect(applied.length).toBe(new Set(applied).size);
      expect(applied).toContain(LATEST_MIGRATION);
      for (const instance of instances) expect(await isMigrated(instance)).toBe(true);
    } finally {
      await Promise.all(instances.map((instance) => instance.close()));
      await target.drop();
    }
  });
});

describe('migrations started by two connections on one SQLite file', () => {
  it('are applied exactly once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'school-auth-migrate-'));
    const connections = [connectSqlite(join(dir, 'db.sqlite')), connectSqlite(join(dir, 'db.sqlite'))];
    try {
      const results = await Promise.all(connections.map((connection) => migrateToLatest(connection)));
      expect(results.flat().filter((name) => name === LATEST_MIGRATION)).toHaveLength(1);
    } finally {
      await Promise.all(connections.map((connection) => connection.close()));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('migrations started by two processes on one SQLite file', () => {
  it('are applied exactly once while the other process waits', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'school-auth-migrate-'));
    const run = async () => {
      const result = await runCli(['migrate'], { cwd: REPO_ROOT, env: { DATA_DIR: dataDir } });
      return { code: result.code, out: result.stdout + result.stderr };
    };
    try {
      const results = await Promise.all([run(), run(), run()]);
      expect(results.map((result) => result.code)).toEqual([0, 0, 0]);
      expect(results.filter((result) => result.out.includes(LATEST_MIGRATION))).toHaveLength(1);
      expect(results.filter((result) => result.out.includes('database is up to date'))).toHaveLength(2);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
