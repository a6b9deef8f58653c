import { inTransaction, type Db } from '../database.js';

/**
 * Deletes the sealed events covered by the last checkpoint made before `cutoffMs`, which then
 * anchors the chain (`audit_sealer.pruned_through`): verification starts from its signed hash.
 * Unsealed events and checkpoints are kept. Moving the anchor is one conditional UPDATE of the
 * sealer row, first in the transaction, so it waits for a sealing batch, and of two prunes at
 * once the second finds nothing left to do. Returns the anchor and how many events went.
 */
export async function pruneSealedEvents(db: Db, cutoffMs: number): Promise<{ through: number; deleted: number }> {
  return inTransaction(db, async (trx) => {
    const anchor = await trx.selectFrom('audit_checkpoints').select('seq').where('sealed_at', '<', cutoffMs).orderBy('seq', 'desc').limit(1).executeTakeFirst();
    if (anchor === undefined) return { through: 0, deleted: 0 };
    const moved = await trx
      .updateTable('audit_sealer')
      .set({ pruned_through: anchor.seq })
      .where('id', '=', 1)
      .where('pruned_through', '<', anchor.seq)
      .returning('pruned_through')
      .executeTakeFirst();
    if (moved === undefined) return { through: 0, deleted: 0 };
    const result = await trx.deleteFrom('events').where('seq', 'is not', null).where('seq', '<=', anchor.seq).executeTakeFirst();
    return { through: anchor.seq, deleted: Number(result.numDeletedRows) };
  });
}
