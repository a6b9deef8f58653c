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
    // (53), SQLite's locked database and its full disk.
    if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN)$/.test(code)) return true;
    if (/^(08|57|53)/.test(code)) return true;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || code === 'SQLITE_FULL') return true;
  }
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended/i.test(
    error.message,
  );
}

/**
 * Why the database is unavailable, in one line for the log: the error's message and its code,
 * never its stack (an outage is expected, not a bug). Node reports each address tried inside an
 * AggregateError whose own message may be empty.
 */
export function outageReason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const { code, errors } = error as { code?: unknown; errors?: unknown };
  const first = Array.isArray(errors) && errors[0] instanceof Error ? errors[0].message : '';
  const text = (error.message || first || error.name).split('\n', 1)[0]!;
  return typeof code === 'string' && !text.includes(code) ? `${text} (${code})` : text;
}

/** Whether a statement failed on a unique index: another row already holds the value. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}
