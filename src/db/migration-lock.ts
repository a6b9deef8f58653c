import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { EXIT_CODES, StartupError } from '../errors.js';
import { makePrivateFile } from './file-permissions.js';
import { explainSqliteOpenError } from './open-problem.js';

/** How long a process waits for another one's migrations: long ones, on a large file, take a while. */
const WAIT_MS = 60_000;

/**
 * A lock between processes sharing one SQLite file (the server and the CLI starting together):
 * an exclusive transaction on a separate lock file, which a second process waits for, at most
 * `waitMs`; then it gives up with a line naming the file (exit 4), and a supervisor starts it again.
 */
export async function withFileLock<T>(lockFile: string, work: () => Promise<T>, waitMs = WAIT_MS): Promise<T> {
  // Within one process the wait must not block the event loop (the holder needs it to finish),
  // so callers queue on a promise first; the file lock then only ever waits for other processes.
  const previous = lockQueues.get(lockFile) ?? Promise.resolve();
  const turn = previous.then(() => holdFileLock(lockFile, work, waitMs));
  const settled = turn.then(
    () => undefined,
    () => undefined,
  );
  lockQueues.set(lockFile, settled);
  try {
    return await turn;
  } finally {
    if (lockQueues.get(lockFile) === settled) lockQueues.delete(lockFile);
  }
}

const lockQueues = new Map<string, Promise<void>>();

async function holdFileLock<T>(lockFile: string, work: () => Promise<T>, waitMs: number): Promise<T> {
  const lock = openLock(lockFile);
  try {
    lock.pragma(`busy_timeout = ${waitMs}`);
    try {
      lock.exec('BEGIN EXCLUSIVE');
    } catch (error) {
      throw lockProblem(error, lockFile, waitMs);
    }
    return await work();
  } finally {
    if (lock.inTransaction) lock.exec('COMMIT');
    lock.close();
  }
}

/** The lock file lives in DATA_DIR: failing to make or open it is DATA_DIR's problem (exit 3). */
function openLock(lockFile: string): SQLite.Database {
  try {
    makePrivateFile(lockFile);
    return new SQLite(lockFile);
  } catch (error) {
    throw explainSqliteOpenError(error, dirname(lockFile));
  }
}

function lockProblem(error: unknown, lockFile: string, waitMs: number): unknown {
  if ((error as { code?: unknown }).code !== 'SQLITE_BUSY') return error;
  return new StartupError(
    `another process has held the migration lock ${lockFile} for ${Math.round(waitMs / 1000)} s (a school-auth serve or migrate still migrating, or one that hangs); ` +
      `let it finish, or find it with: fuser ${lockFile}`,
    EXIT_CODES.databaseUnreachable,
    { cause: error },
  );
}
