import { existsSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { describe, expect } from 'vitest';
import { cliTest as test, ok, SLOW } from '../helpers/cli-workspace.js';

const READ_ONLY = [
  ['school', 'list'],
  ['admin', 'list'],
  ['sessions', 'list', '--school', 'lincoln-high'],
  ['keys', 'list'],
  ['events'],
  ['config', 'check'],
];

const NOT_MIGRATED = 'school-auth: the database schema is missing or out of date; apply it with: school-auth migrate\n';

/** The tables and signing keys in a workspace's SQLite file, read without changing it. */
function inspect(dataDir: string): { tables: string[]; keys: { alg: string }[] } {
  const file = join(dataDir, 'school-auth.sqlite');
  if (!existsSync(file)) return { tables: [], keys: [] };
  const sqlite = new SQLite(file, { readonly: true });
  try {
    const tables = (sqlite.prepare("select name from sqlite_master where type = 'table' order by name").all() as { name: string }[]).map((row) => row.name);
    const keys = tables.includes('signing_keys') ? (sqlite.prepare('select alg from signing_keys').all() as { alg: string }[]) : [];
    return { tables, keys };
  } finally {
    sqlite.close();
  }
}

describe.concurrent('read-only commands change neither the schema nor the keys', () => {
  test('on an unmigrated database they say to run school-auth migrate, and create no table', SLOW, async ({ ws }) => {
    for (const args of READ_ONLY.filter(([command]) => command !== 'config')) {
      const result = await ws.run(args);
      expect(result, args.join(' ')).toMatchObject({ code: 1, stdout: '', stderr: NOT_MIGRATED });
    }
    expect(inspect(ws.dataDir).tables).toEqual([]);
  });

  test('no command but serve creates a signing key, whatever JWT_ALG the shell has', SLOW, async ({ ws }) => {
    ok(await ws.run(['migrate']));
    const other = { env: { JWT_ALG: 'EdDSA' } };
    ok(await ws.run(['school', 'add', 'lincoln-high'], other));
    for (const args of READ_ONLY) ok(await ws.run(args, other));
    expect(inspect(ws.dataDir).keys).toEqual([]);

    // The server creates the key of its own JWT_ALG; the CLI with another one adds none.
    await ws.openApp();
    for (const args of READ_ONLY) ok(await ws.run(args, other));
    ok(await ws.run(['school', 'add', 'oak-ridge'], other));
    expect(inspect(ws.dataDir).keys).toEqual([{ alg: 'ES256' }]);
  });
});
