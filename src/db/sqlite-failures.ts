import { EXIT_CODES, StartupError } from '../errors.js';

/**
 * SQLite failures that are about the database file rather than the statement, named with the
 * file and what to do. They keep SQLite's `code`, so a full disk is still classified as an
 * outage (errors.ts: 503 while serving); at start or in a command they are its one-line message
 * and exit code.
 */
class SqliteFileError extends StartupError {
  constructor(
    message: string,
    exitCode: number,
    readonly code: string,
    cause: unknown,
  ) {
    super(message, exitCode, { cause });
    this.name = 'SqliteFileError';
  }
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** SQLITE_CORRUPT and its extended codes, and SQLITE_NOTADB: the file is not a sound database. */
export function isDamagedDatabase(error: unknown): boolean {
  return /^SQLITE_(CORRUPT|NOTADB)/.test(codeOf(error) ?? '');
}

export function isDiskFull(error: unknown): boolean {
  return codeOf(error) === 'SQLITE_FULL';
}

export function diskFull(file: string, cause: unknown): SqliteFileError {
  return new SqliteFileError(`disk full: no space left on the device holding ${file}; free space there`, EXIT_CODES.dataDir, 'SQLITE_FULL', cause);
}

/**
 * A damaged file is never answered with advice that leads to an empty database: restoring the
 * backup is the way back. `untouched`: found before anything was written (the checks at open).
 */
export function damagedDatabase(file: string, reason: string, cause: unknown, untouched: boolean): SqliteFileError {
  const written = untouched ? '; nothing was written to it.' : '.';
  return new SqliteFileError(
    `the database ${file} is damaged (${reason})${written} Stop every instance and restore the latest backup (docs/operations.md#backups-and-restore); ` +
      'do not start on an empty DATA_DIR: it has no school, admin or key',
    EXIT_CODES.databaseDamaged,
    codeOf(cause) ?? 'SQLITE_CORRUPT',
    cause,
  );
}

/** What a failed statement on `file` reports: one of the above, or the error as it is. */
export function explainSqliteFailure(error: Error, file: string): Error {
  if (error instanceof SqliteFileError) return error;
  if (isDiskFull(error)) return diskFull(file, error);
  if (isDamagedDatabase(error)) return damagedDatabase(file, error.message, error, false);
  return error;
}
