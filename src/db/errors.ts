/**
 * Whether an error means the database cannot serve us right now (as opposed to a bug in a query):
 * such requests get 503 with Retry-After, and the next request tries again with a fresh connection.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    // Node socket errors, PostgreSQL connection exceptions (08), operator intervention (57: admin
    // shutdown, terminated backend, statement timeout, cannot connect now), insufficient resources
    // (53), and SQLite's locked database.
    if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN)$/.test(code)) return true;
    if (/^(08|57|53)/.test(code)) return true;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return true;
  }
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended/i.test(
    error.message,
  );
}
