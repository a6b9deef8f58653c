import { setImmediate } from 'node:timers';
import type { Transaction } from 'kysely';
import { dialectOf, inTransaction, type Db } from './database.js';
import type { DatabaseSchema } from './schema/index.js';

type Work<T> = (trx: Transaction<DatabaseSchema>) => Promise<T>;

interface Queued {
  readonly work: Work<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** The works waiting for the next commit, per database. */
const groups = new WeakMap<Db, Queued[]>();

/**
 * Runs `work` atomically, and settles once it is committed. On SQLite the works queued during one
 * turn of the event loop share one transaction (group commit): a commit appends to the WAL and
 * takes the file locks once for all of them, which costs more than a rotation's statements.
 * If any work of a group fails, or the commit does, the whole group is rolled back and each of
 * its works runs again in a transaction of its own, so a failing work fails alone and the others
 * commit. `work` may therefore run twice: it must act only through `trx`.
 * On PostgreSQL, or inside the caller's transaction, it is an ordinary transaction.
 */
export function inGroupCommit<T>(db: Db, work: Work<T>): Promise<T> {
  if (db.isTransaction || dialectOf(db) !== 'sqlite') return inTransaction(db, work);
  return new Promise<T>((resolve, reject) => {
    let group = groups.get(db);
    if (group === undefined) {
      group = [];
      groups.set(db, group);
      // setImmediate runs after this turn's I/O callbacks: every request read in it has queued.
      setImmediate(() => void commitGroup(db));
    }
    group.push({ work, resolve: resolve as (value: unknown) => void, reject });
  });
}

async function commitGroup(db: Db): Promise<void> {
  const group = groups.get(db) ?? [];
  groups.delete(db);
  let values: unknown[];
  try {
    values = await db.transaction().execute(async (trx) => {
      const results: unknown[] = [];
      for (const queued of group) results.push(await queued.work(trx));
      return results;
    });
  } catch (error) {
    // Rare (a constraint a work broke, a full disk): nothing of the group was committed. A group
    // of one already ran alone.
    if (group.length === 1) return group[0]!.reject(error);
    for (const queued of group) void inTransaction(db, queued.work).then(queued.resolve, queued.reject);
    return;
  }
  values.forEach((value, index) => group[index]!.resolve(value));
}
