import { EXIT_CODES, StartupError } from '../errors.js';
import type { Database } from './database.js';
import { describeDatabase } from './database-target.js';

interface ErrorFields {
  readonly code?: unknown;
  readonly message?: unknown;
  readonly errors?: unknown;
}

function fieldsOf(error: unknown): ErrorFields {
  return typeof error === 'object' && error !== null ? error : {};
}

/** Where DATABASE_URL points, without its password: host:port, the user and the database name. */
function target(databaseUrl: string): { where: string; user: string; database: string } {
  const described = describeDatabase({ databaseUrl, dataDir: '' });
  if (described.kind !== 'postgresql') throw new TypeError('a PostgreSQL URL was expected');
  return { where: `${described.host}:${described.port}`, user: described.user, database: described.database };
}

const NETWORK_PROBLEMS: Record<string, string> = {
  ECONNREFUSED: 'connection refused; check that PostgreSQL is running there and the host and port in DATABASE_URL',
  ENOTFOUND: 'the host name does not resolve; check the host in DATABASE_URL',
  EAI_AGAIN: 'the host name does not resolve now; check the host in DATABASE_URL and the DNS',
  EHOSTUNREACH: 'the host is unreachable; check the host in DATABASE_URL and the network',
  ENETUNREACH: 'the network is unreachable; check the host in DATABASE_URL and the network',
  ETIMEDOUT: 'no answer; check the host and port in DATABASE_URL and the firewall',
  ECONNRESET: 'the connection was reset; check the port in DATABASE_URL and DATABASE_SSL',
};

/**
 * What a failure to reach PostgreSQL at start means for the operator, as a StartupError naming
 * DATABASE_URL (never its password); undefined for errors that are not about reaching it.
 */
function explainPostgresOpenError(error: unknown, databaseUrl: string): StartupError | undefined {
  const { code, message, errors } = fieldsOf(error);
  const { where, user, database } = target(databaseUrl);
  const fail = (text: string) => new StartupError(text, EXIT_CODES.databaseUnreachable, { cause: error });
  // Node reports each address tried (IPv6 and IPv4 of localhost) inside an AggregateError.
  const networkCode = typeof code === 'string' ? code : (Array.isArray(errors) ? fieldsOf(errors[0]).code : undefined);
  if (typeof networkCode === 'string' && NETWORK_PROBLEMS[networkCode] !== undefined) {
    return fail(`cannot connect to PostgreSQL at ${where}: ${NETWORK_PROBLEMS[networkCode]}`);
  }
  if (code === '3D000') return fail(`PostgreSQL at ${where} has no database "${database}"; create it (createdb ${database}) or correct the database name in DATABASE_URL`);
  // invalid_password, invalid_authorization_specification (no such role, pg_hba.conf).
  if (code === '28P01' || code === '28000') {
    return fail(`PostgreSQL at ${where} refused user "${user}": ${String(message)}; check the user and password in DATABASE_URL`);
  }
  if (code === '57P03' || code === '53300') return fail(`PostgreSQL at ${where} cannot take connections now (${String(message)}); try again, or check DATABASE_POOL_SIZE against its max_connections`);
  // The driver's own failures carry no SQLSTATE; a server error that does is not about reaching it.
  if (code !== undefined || typeof message !== 'string') return undefined;
  if (message.includes('connection timeout') || message === 'timeout expired') return fail(`cannot connect to PostgreSQL at ${where}: no answer within DATABASE_CONNECT_TIMEOUT_MS; check the host and port in DATABASE_URL and the firewall`);
  if (message.includes('SSL')) return fail(`cannot connect to PostgreSQL at ${where}: ${message}; check DATABASE_SSL (and sslmode in DATABASE_URL)`);
  if (message.startsWith('Connection terminated')) return fail(`cannot connect to PostgreSQL at ${where}: the connection was closed before it was ready; check the port in DATABASE_URL and DATABASE_SSL`);
  return undefined;
}

/**
 * One round trip before anything else, so that a database that cannot be reached is reported as
 * such (what to check, exit 4) rather than as the first query's failure.
 */
export async function checkReachable(database: Database, databaseUrl: string | undefined): Promise<void> {
  try {
    await database.ping();
  } catch (error) {
    throw (databaseUrl === undefined ? undefined : explainPostgresOpenError(error, databaseUrl)) ?? error;
  }
}

/**
 * Why DATA_DIR (or the SQLite file in it) could not be opened, naming DATA_DIR and the fix. What
 * is already explained (a damaged file, a driver built for another Node.js) is not DATA_DIR's
 * fault and keeps its own message.
 */
export function explainSqliteOpenError(error: unknown, dataDir: string): StartupError {
  if (error instanceof StartupError) return error;
  const { code, message } = fieldsOf(error);
  const reasons: Record<string, string> = {
    ENOTDIR: 'not a directory',
    EEXIST: 'not a directory',
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    EROFS: 'read-only file system',
    ENOSPC: 'no space left on the device',
    ENOENT: 'a parent directory is missing',
  };
  const reason = (typeof code === 'string' ? reasons[code] : undefined) ?? String(message);
  return new StartupError(`DATA_DIR ${dataDir} cannot be used (${reason}); set DATA_DIR to a directory this user can create and write`, EXIT_CODES.dataDir, { cause: error });
}
