import type { Db } from '../../db/database.js';
import { dialectOf } from '../../db/database.js';
import { AuditProblem } from './audit-problem.js';
import { verifyAgainst } from './verify-against.js';
import { verifyChain, type ChainReport } from './verify-chain.js';

type TrailReport = ChainReport & { readonly shipped: number | undefined };

type TrailVerdict = { readonly ok: true; readonly report: TrailReport } | { readonly ok: false; readonly problem: string };

/**
 * `events verify`: the chain and its checkpoints, then the shipped copies in `againstFile` when
 * given, all in one snapshot (repeatable read), so a sealer committing meanwhile changes nothing.
 */
export async function verifyTrail(db: Db, againstFile?: string): Promise<TrailVerdict> {
  let transaction = db.transaction();
  if (dialectOf(db) === 'postgres') transaction = transaction.setIsolationLevel('repeatable read');
  try {
    return await transaction.execute(async (trx) => {
      const chain = await verifyChain(trx);
      const shipped = againstFile === undefined ? undefined : await verifyAgainst(trx, againstFile);
      return { ok: true, report: { ...chain, shipped } };
    });
  } catch (error) {
    if (error instanceof AuditProblem) return { ok: false, problem: error.message };
    throw error;
  }
}
