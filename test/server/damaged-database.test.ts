import { createHash, randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import SQLite from 'better-sqlite3';
import { describe, expect } from 'vitest';
import { REPO_ROOT } from '../helpers/cli-run.js';
import { cliTest as it, ok, SLOW, type Workspace } from '../helpers/cli-workspace.js';
import { ServerProcess } from '../helpers/server-process.js';

/**
 * A damaged database file, or a SQLite driver built for another Node.js, is not a DATA_DIR to
 * replace: following that advice starts an empty database. Each has its own line and exit code
 * (docs/operations.md), and nothing in DATA_DIR is created, migrated or written. Real files,
 * real processes.
 */
const ENV = { PORT: '0', ISSUER: 'https://auth.school.example' };

async function serve(ws: Workspace, env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string }> {
  const server = ServerProcess.start({ cwd: ws.root, env: { ...ENV, DATA_DIR: ws.dataDir, ...env } });
  ws.track(server.child);
  const exit = await server.waitExit(30_000);
  return { code: exit.code, stderr: server.stderr };
}

/** Every file of DATA_DIR with the SHA-256 of its bytes. */
function snapshot(dataDir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of readdirSync(dataDir).sort()) files[name] = createHash('sha256').update(readFileSync(join(dataDir, name))).digest('hex');
  return files;
}

/** A real database made by the command line: a school and an admin, migrated, no WAL left. */
async function realDatabase(ws: Workspace): Promise<string> {
  ok(await ws.run(['school', 'add', 's1']));
  ok(await ws.run(['admin', 'add', '--school', 's1', '--username', 'alice', '--password-stdin'], { input: 'a password long enough\n' }));
  return join(ws.dataDir, 'school-auth.sqlite');
}

/** Garbage over one whole page: the root of a table nothing reads while the service starts. */
function damagePageOf(file: string, table: string): void {
  const sqlite = new SQLite(file);
  const { rootpage } = sqlite.prepare('select rootpage from sqlite_schema where name = ?').get(table) as { rootpage: number };
  const pageSize = sqlite.pragma('page_size', { simple: true }) as number;
  sqlite.close();
  const fd = openSync(file, 'r+');
  writeSync(fd, randomBytes(pageSize), 0, pageSize, (rootpage - 1) * pageSize);
  closeSync(fd);
}

function expectDamagedLine(stderr: string, file: string): void {
  expect(stderr).toMatch(new RegExp(`^school-auth: the database ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is damaged \\(.+\\); nothing was written to it\\. .*restore .*docs/operations\\.md[^\\n]*\\n$`));
  expect(stderr).not.toContain('set DATA_DIR to a directory');
}

describe.concurrent('a damaged database at start: exit 6, restore from the backup, nothing written', () => {
  it('a file that is not a database: serve, migrate and a read-only command', SLOW, async ({ ws }) => {
    const file = await realDatabase(ws);
    writeFileSync(file, randomBytes(64 * 1024));
    const before = snapshot(ws.dataDir);
    const served = await serve(ws);
    expect(served.code).toBe(6);
    expectDamagedLine(served.stderr, file);
    for (const args of [['migrate'], ['school', 'list']]) {
      const result = await ws.run(args, { env: ENV });
      expect(result.code, args.join(' ')).toBe(6);
      expectDamagedLine(result.stderr, file);
    }
    expect(snapshot(ws.dataDir)).toEqual(before);
  });

  it('a database cut short', SLOW, async ({ ws }) => {
    const file = await realDatabase(ws);
    truncateSync(file, Math.floor(statSync(file).size / 2));
    const before = snapshot(ws.dataDir);
    const served = await serve(ws);
    expect(served.code).toBe(6);
    expectDamagedLine(served.stderr, file);
    expect(snapshot(ws.dataDir)).toEqual(before);
  });

  it('a page of a table the start never reads: serve and migrate check every page first', SLOW, async ({ ws }) => {
    const file = await realDatabase(ws);
    damagePageOf(file, 'sessions');
    const before = snapshot(ws.dataDir);
    const served = await serve(ws);
    expect(served.code).toBe(6);
    expectDamagedLine(served.stderr, file);
    const migrated = await ws.run(['migrate'], { env: ENV });
    expect(migrated.code).toBe(6);
    expectDamagedLine(migrated.stderr, file);
    expect(snapshot(ws.dataDir)).toEqual(before);
  });
});

describe.concurrent('a SQLite driver built for another Node.js: exit 7, the command that rebuilds it', () => {
  const builtForAnotherNode = { NODE_OPTIONS: `--import ${pathToFileURL(join(REPO_ROOT, 'test', 'helpers', 'dlopen-built-for-another-node.mjs')).href}` };

  it('serve and a command say so, name the rebuild and leave DATA_DIR as it was', SLOW, async ({ ws }) => {
    await realDatabase(ws);
    const before = snapshot(ws.dataDir);
    const expected =
      `school-auth: better-sqlite3 (the SQLite driver) was built for another version of Node.js (NODE_MODULE_VERSION 108; this Node.js ${process.version} needs ${process.versions.modules}); ` +
      `nothing was opened. Rebuild it for this Node.js: cd ${REPO_ROOT} && npm rebuild better-sqlite3\n`;
    const served = await serve(ws, builtForAnotherNode);
    expect(served).toEqual({ code: 7, stderr: expected });
    const listed = await ws.run(['school', 'list'], { env: { ...ENV, ...builtForAnotherNode } });
    expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 7, stderr: expected });
    expect(snapshot(ws.dataDir)).toEqual(before);
  });
});
