import { setImmediate } from 'node:timers';
import type { ControlledTransaction, Transaction } from 'kysely';
import { dialectOf, inTransaction, type Db } from './database.js';
import type { DatabaseSchema } from './schema/index.js';

type Work<T> = (trx: Transaction<DatabaseSchema>) => Promise<T>;
type Outcome = { readonly value: unknown } | { readonly error: unknown };

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
 * takes the file locks once for all of them, which costs more than a rotation's statements. Each
 * work runs in a savepoint of its own, so one that fails is rolled back and rejected alone; if the
 * commit itself fails, every work of the group rejects, and none of them was answered before.
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
  let outcomes: Outcome[];
  try {
    outcomes = await runGroup(db, group);
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
async function runGroup(db: Db, group: readonly Queued[]): Promise<Outcome[]> {
  const trx = await db.startTransaction().execute();
  try {
    const outcomes: Outcome[] = [];
    for (const queued of group) outcomes.push(await runInSavepoint(trx, queued.work));
    await trx.commit().execute();
    return outcomes;
  } catch (error) {
    // A failed COMMIT may already have ended the transaction (SQLite rolls back on some errors).
    await trx.rollback().execute().catch(() => undefined);
    throw error;
  }
}

async function runInSavepoint(trx: ControlledTransaction<DatabaseSchema>, work: Work<unknown>): Promise<Outcome> {
  const inside = await trx.savepoint('work').execute();
  try {
    const value = await work(inside);
    await inside.releaseSavepoint('work').execute();
    return { value };
  } catch (error) {
    // Rolling back fails only when the error ended the whole transaction (a full disk): the group fails.
    await (await inside.rollbackToSavepoint('work').execute()).releaseSavepoint('work').execute();
    return { error };
  }
}
