import { setImmediate } from 'node:timers';
import type { Db } from './database.js';
import { idleSqliteConnection, rootSqliteConnection, runNow, type RunNow, type SqliteConnection } from './sqlite-direct.js';

interface Queued {
  readonly work: (run: RunNow) => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

type Outcome = { readonly value: unknown } | { readonly error: unknown };

/** The works waiting for the next commit, per connection. */
const groups = new WeakMap<SqliteConnection, Queued[]>();

/**
 * Runs `work` atomically in a SQLite transaction and resolves once that transaction committed.
 * The works queued during one turn of the event loop share one transaction (group commit): a
 * commit writes its pages to the WAL and takes the file locks once, which costs more than a
 * rotation's two statements. Each work runs in a savepoint of its own, so one that throws is
 * rolled back alone and rejects alone; if the commit itself fails, every work of the group
 * rejects, and none of them was answered before. `work` must be synchronous and touch the
 * database only through `run`. Throws for a `db` that is not a root SQLite instance.
 */
export function sqliteTransaction<T>(db: Db, work: (run: RunNow) => T): Promise<T> {
  const connection = rootSqliteConnection(db);
  if (connection === undefined) return Promise.reject(new TypeError('sqliteTransaction: not a root SQLite database'));
  return new Promise<T>((resolve, reject) => {
    let group = groups.get(connection);
    if (group === undefined) {
      group = [];
      groups.set(connection, group);
      // setImmediate runs after the I/O callbacks of this turn: every request read in it has queued.
      setImmediate(() => commitGroup(db, connection));
    }
    group.push({ work, resolve: resolve as (value: unknown) => void, reject });
  });
}

function commitGroup(db: Db, connection: SqliteConnection): void {
  const group = groups.get(connection) ?? [];
  groups.delete(connection);
  if (idleSqliteConnection(db) !== undefined) {
    settle(group, () => runGroup(connection, group));
    return;
  }
  // A Kysely transaction is open and awaiting: take the connection after it, through Kysely.
  db.connection()
    .execute(() => Promise.resolve().then(() => settle(group, () => runGroup(connection, group))))
    .catch((error: unknown) => {
      for (const queued of group) queued.reject(error);
    });
}

function settle(group: readonly Queued[], run: () => Outcome[]): void {
  let outcomes: Outcome[];
  try {
    outcomes = run();
  } catch (error) {
    for (const queued of group) queued.reject(error);
    return;
  }
  outcomes.forEach((outcome, index) => {
    const queued = group[index]!;
    if ('error' in outcome) queued.reject(outcome.error);
    else queued.resolve(outcome.value);
  });
}

/** One transaction for the whole group; throws when it could not be committed. */
function runGroup(connection: SqliteConnection, group: readonly Queued[]): Outcome[] {
  const statement = (text: string) => connection.prepare(text).run();
  const run: RunNow = (query) => runNow(connection, query);
  statement('begin');
  try {
    const outcomes = group.map((queued): Outcome => {
      statement('savepoint work');
      try {
        const value = queued.work(run);
        statement('release work');
        return { value };
      } catch (error) {
        // Some errors (a full disk, an I/O error) end the whole transaction: the group fails.
        if (!connection.sqlite.inTransaction) throw error;
        statement('rollback to work');
        statement('release work');
        return { error };
      }
    });
    statement('commit');
    return outcomes;
  } catch (error) {
    // A failed COMMIT may already have ended the transaction (SQLite rolls back on some errors).
    if (connection.sqlite.inTransaction) statement('rollback');
    throw error;
  }
}
