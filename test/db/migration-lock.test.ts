import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { withFileLock } from '../../src/db/migration-lock.js';
import { EXIT_CODES, StartupError } from '../../src/errors.js';
import { REPO_ROOT } from '../helpers/cli-run.js';

/**
 * Another process holding the migration lock: an exclusive transaction on the lock file, for
 * `holdMs` or until killed. (The wait for the lock blocks this process, so the holder ends itself.)
 */
function holdLock(lockFile: string, holdMs = 600_000): Promise<ChildProcess> {
  const script = `const db = new (require('better-sqlite3'))(process.argv[1]); db.exec('BEGIN EXCLUSIVE'); process.stdout.write('held\\n'); setTimeout(() => process.exit(0), ${holdMs});`;
  const child = spawn(process.execPath, ['-e', script, lockFile], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout.once('data', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`the lock holder exited with ${String(code)}`)));
  });
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe('the migration lock between processes sharing one SQLite file', () => {
  it('waits a bounded time for another process, then gives up naming the lock file (exit 4), without running the work', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'school-auth-lock-'));
    const lockFile = join(dir, 'school-auth.sqlite.migration-lock');
    const holder = await holdLock(lockFile);
    cleanups.push(() => holder.kill('SIGKILL'), () => rmSync(dir, { recursive: true, force: true }));
    let ran = false;
    const started = Date.now();
    const error = await withFileLock(lockFile, () => Promise.resolve((ran = true)), 300).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(ran).toBe(false);
    expect(error).toBeInstanceOf(StartupError);
    expect(error).toMatchObject({
      exitCode: EXIT_CODES.databaseUnreachable,
      message: `another process has held the migration lock ${lockFile} for 0 s (a school-auth serve or migrate still migrating, or one that hangs); let it finish, or find it with: fuser ${lockFile}`,
    });
  });

  it('takes the lock once the other process lets go', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'school-auth-lock-'));
    const lockFile = join(dir, 'school-auth.sqlite.migration-lock');
    const holder = await holdLock(lockFile, 300);
    cleanups.push(() => holder.kill('SIGKILL'), () => rmSync(dir, { recursive: true, force: true }));
    await expect(withFileLock(lockFile, () => Promise.resolve('migrated'), 10_000)).resolves.toBe('migrated');
  });
});
