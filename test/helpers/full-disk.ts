import SQLite from 'better-sqlite3';

/** Statements that write nothing themselves: a transaction's bounds. */
const BOUNDS = /^\s*(begin|commit|rollback|end)\b/i;

/** What runs a statement (a write with `returning` runs through `all` or `get`). */
const RUNS = new Set<string | symbol>(['run', 'get', 'all', 'iterate']);

/**
 * Makes a better-sqlite3 connection fail its writes as SQLite fails them on a full disk, while
 * `full` is set: the statement throws SqliteError SQLITE_FULL ("database or disk is full") after
 * SQLite has rolled back the transaction it was part of. Statements that only read, and a
 * transaction's bounds, go on as usual. For where no small file system can be mounted (test/server/disk-full.test.ts mounts one).
 */
export function failWritesWhenFull(sqlite: SQLite.Database): { full: boolean } {
  const disk = { full: false };
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((text: string) => {
    const statement = prepare(text);
    if (statement.readonly || BOUNDS.test(text)) return statement;
    return new Proxy(statement, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        const method = (value as (...args: unknown[]) => unknown).bind(target);
        if (!RUNS.has(property)) return method;
        return (...parameters: unknown[]) => {
          if (!disk.full) return method(...parameters);
          if (sqlite.inTransaction) prepare('rollback').run();
          throw new SQLite.SqliteError('database or disk is full', 'SQLITE_FULL');
        };
      },
    });
  }) as typeof sqlite.prepare;
  return disk;
}
