import { chmodSync, closeSync, constants, existsSync, openSync, statSync } from 'node:fs';
import { createDirectory } from './create-directory.js';

/**
 * The SQLite files hold the private signing keys and the password hashes: only the service's
 * user may read them, whatever the umask. SQLite creates the WAL and shared-memory files with
 * the mode of the database file, so making that file 0600 before SQLite opens it covers them;
 * files left by an older version are tightened too.
 */
const PRIVATE_FILE = 0o600;
const PRIVATE_DIR = 0o700;

/**
 * Creates DATA_DIR 0700. An existing one is left as the operator made it (it may be shared on
 * purpose, e.g. with a backup group), but a warning that names the fix is written at start.
 */
export function prepareDataDir(dir: string): void {
  if (!existsSync(dir)) {
    createDirectory(dir, PRIVATE_DIR);
    chmodSync(dir, PRIVATE_DIR);
    return;
  }
  const mode = statSync(dir).mode & 0o777;
  if ((mode & 0o077) === 0) return;
  process.stderr.write(
    `school-auth: warning: DATA_DIR ${dir} is accessible to other users (mode ${mode.toString(8)}); restrict it with: chmod 700 ${dir}\n`,
  );
}

/**
 * Creates `file` 0600 if it is missing, and makes it 0600 if it exists. Only a regular file: a
 * named pipe would hold the opening process until something reads it (O_NONBLOCK refuses at
 * once whatever appears meanwhile).
 */
export function makePrivateFile(file: string): void {
  if (statSync(file, { throwIfNoEntry: false })?.isFile() === false) throw new Error(`${file} is not a regular file`);
  closeSync(openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_NONBLOCK, PRIVATE_FILE));
  chmodSync(file, PRIVATE_FILE);
}

/** The database file 0600 before SQLite opens it; its WAL and shared-memory files 0600 if present. */
export function restrictSqliteFiles(file: string): void {
  makePrivateFile(file);
  for (const companion of [`${file}-wal`, `${file}-shm`]) {
    if (existsSync(companion)) chmodSync(companion, PRIVATE_FILE);
  }
}
