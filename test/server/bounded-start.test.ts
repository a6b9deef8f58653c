import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { cliTest as it, SLOW, type Workspace } from '../helpers/cli-workspace.js';
import { ServerProcess } from '../helpers/server-process.js';

/**
 * Every step of the start ends: a DATA_DIR that can never be created, or a file in it that would
 * block whoever opens it, is reported within seconds, with the path and the reason, rather than
 * waited on forever. Real processes, each given 15 s.
 */
const BOUND_MS = 15_000;

async function serve(ws: Workspace, dataDir: string): Promise<{ code: number | null; stderr: string; ms: number }> {
  const started = Date.now();
  const server = ServerProcess.start({ cwd: ws.root, env: { PORT: '0', ISSUER: 'https://auth.school.example', DATA_DIR: dataDir } });
  ws.track(server.child);
  const exit = await server.waitExit(BOUND_MS);
  return { code: exit.code, stderr: server.stderr, ms: Date.now() - started };
}

function mkfifo(path: string): void {
  const made = spawnSync('mkfifo', ['-m', '600', path]);
  if (made.status !== 0) throw new Error(`mkfifo ${path} failed: ${made.stderr.toString()}`);
}

describe.concurrent('a start that cannot finish ends within seconds, naming the path and the reason', () => {
  it.runIf(existsSync('/proc/self'))('DATA_DIR under /proc, where no directory can be made: exit 3', SLOW, async ({ ws }) => {
    const result = await serve(ws, '/proc/school-auth-data');
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      'school-auth: DATA_DIR /proc/school-auth-data cannot be used (cannot create /proc/school-auth-data: the file system of /proc does not allow it); set DATA_DIR to a directory this user can create and write\n',
    );
    expect(result.ms).toBeLessThan(BOUND_MS);
  });

  it('a database file that is a named pipe: exit 3, not a wait for a writer', SLOW, async ({ ws }) => {
    mkdirSync(ws.dataDir, { mode: 0o700 });
    const file = join(ws.dataDir, 'school-auth.sqlite');
    mkfifo(file);
    const result = await serve(ws, ws.dataDir);
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(`school-auth: DATA_DIR ${ws.dataDir} cannot be used (${file} is not a regular file); set DATA_DIR to a directory this user can create and write\n`);
  });

  it('a migration lock file that is a named pipe: exit 3, naming it', SLOW, async ({ ws }) => {
    mkdirSync(ws.dataDir, { mode: 0o700 });
    const lock = join(ws.dataDir, 'school-auth.sqlite.migration-lock');
    mkfifo(lock);
    const result = await serve(ws, ws.dataDir);
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(`school-auth: DATA_DIR ${ws.dataDir} cannot be used (${lock} is not a regular file); set DATA_DIR to a directory this user can create and write\n`);
  });
});
