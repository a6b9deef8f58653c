import { describe, expect } from 'vitest';
import { LATEST_MIGRATION } from '../../src/db/migrate.js';
import { PACKAGE_VERSION } from '../../src/package-version.js';
import { cliTest as it, ok, SLOW, type Workspace } from '../helpers/cli-workspace.js';
import { TEST_DIALECTS } from '../helpers/database.js';
import { openRawStore, type RawStore } from '../helpers/raw-store.js';
import { ServerProcess } from '../helpers/server-process.js';

/**
 * Rolling back to this release on a database that a newer one migrated: every way in refuses
 * with one line naming both releases and what to do, exit 5, and leaves the database as it was.
 */
const FUTURE = '099-from-the-future';

const refusal = (migratedBy: string, runInstead: string) =>
  `school-auth: the database was migrated by ${migratedBy} (migration ${FUTURE}); this is school-auth ${PACKAGE_VERSION}, ` +
  `which knows migrations up to ${LATEST_MIGRATION}. Nothing was changed: run ${runInstead}, or restore the backup taken ` +
  'before the upgrade (docs/deploy.md, "Upgrade and rollback")\n';

/** What the commands must leave alone: the tables, the migration bookkeeping and the data. */
async function snapshot(store: RawStore): Promise<unknown[]> {
  return [
    await store.tables(),
    await store.query('select name, timestamp from kysely_migration order by name'),
    await store.query('select * from kysely_migration_lock'),
    await store.query('select migration, version from migration_versions order by migration'),
    await store.query('select key, name from schools order by key'),
  ];
}

async function serve(ws: Workspace, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const server = ServerProcess.start({ cwd: ws.root, env: { DATA_DIR: ws.dataDir, PORT: '0', ISSUER: 'https://auth.school.example', ...env } });
  ws.track(server.child);
  const exit = await server.waitExit(30_000);
  return { code: exit.code, stdout: server.stdout, stderr: server.stderr };
}

describe.concurrent('a database migrated by a newer release', () => {
  for (const dialect of TEST_DIALECTS) {
    it(`on ${dialect}: migrate, serve and the other commands refuse it with exit 5 and change nothing`, SLOW, async ({ ws }) => {
      const store = await openRawStore(dialect, ws.dataDir);
      try {
        const env = store.env;
        ok(await ws.run(['migrate'], { env }));
        ok(await ws.run(['school', 'add', 'lincoln-high'], { env }));
        await store.query(`insert into kysely_migration (name, timestamp) values ('${FUTURE}', '2031-01-01T00:00:00.000Z')`);
        await store.query(`insert into migration_versions (migration, version) values ('${FUTURE}', '9.0.0')`);
        const before = await snapshot(store);

        const expected = { code: 5, stdout: '', stderr: refusal('school-auth 9.0.0', 'school-auth 9.0.0 or later') };
        for (const args of [['migrate'], ['school', 'list'], ['school', 'add', 'oak-ridge']]) {
          expect(await ws.run(args, { env }), args.join(' ')).toMatchObject(expected);
        }
        expect(await serve(ws, env)).toEqual(expected);
        expect(await snapshot(store)).toEqual(before);

        // A newer build that did not record its version is named by its migration alone.
        await store.query(`delete from migration_versions where migration = '${FUTURE}'`);
        expect(await ws.run(['migrate'], { env })).toMatchObject({ code: 5, stderr: refusal('a newer school-auth', 'that newer version') });
      } finally {
        await store.drop();
      }
    });
  }
});
