import type { Transaction } from 'kysely';
import { TurnBatch, type Answers } from '../runtime/turn-batch.js';
import { dialectOf, inTransaction, type Db } from './database.js';
import type { DatabaseSchema } from './schema/index.js';

type Work<T> = (trx: Transaction<DatabaseSchema>) => Promise<T>;

/** The works waiting for the next commit, per database. */
const groups = new WeakMap<Db, TurnBatch<Work<unknown>, unknown>>();

/**
 * Runs `work` atomically, and settles once it is committed. On SQLite the works queued during one
 * turn of the event loop share one transaction (group commit): a commit appends to the WAL and
 * takes the file locks once for all of them, which costs more than a rotation's statements
 * (bench/README.md, the ledger).
 * If any work of a group fails, or the commit does, the whole group is rolled back and each of
 * its works runs again in a transaction of its own, so a failing work fails alone and the others
 * commit. `work` may therefore run twice: it must act only through `trx`, and resolve to a value
 * that is not an Error (a batch's Error answers its item's rejection).
 * On PostgreSQL, or inside the caller's transaction, it is an ordinary transaction.
 */
export function inGroupCommit<T>(db: Db, work: Work<T>): Promise<T> {
  if (db.isTransaction || dialectOf(db) !== 'sqlite') return inTransaction(db, work);
  let group = groups.get(db);
  if (group === undefined) {
    group = new TurnBatch((works) => commitGroup(db, works));
    groups.set(db, group);
  }
  return group.add(work) as Promise<T>;
}

async function commitGroup(db: Db, works: readonly Work<unknown>[]): Promise<Answers<unknown>> {
  try {
    return await db.transaction().execute(async (trx) => {
      const results: unknown[] = [];
      for (const work of works) results.push(await work(trx));
      return results;
    });
  } catch (error) {
    // Rare (a constraint a work broke, a full disk): nothing of the group was committed. A group
    // of one already ran alone.
    if (works.length === 1) throw error;
    return Promise.all(works.map((work) => inTransaction(db, work).catch((failure: unknown) => asError(failure))));
  }
}

function asError(failure: unknown): Error {
  return failure instanceof Error ? failure : new Error(String(failure));
}
