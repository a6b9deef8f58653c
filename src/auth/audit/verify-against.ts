import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { decodeJwt } from 'jose';
import type { Db } from '../../db/database.js';
import { checkpointAt } from '../../db/queries/audit-reading.js';
import { AuditProblem, isoTime } from './audit-problem.js';

interface ShippedCheckpoint {
  readonly seq: number;
  readonly hash: string;
  readonly jws: string;
}

function shippedCheckpoint(line: string): ShippedCheckpoint | undefined {
  if (!line.includes('"audit_checkpoint"')) return undefined;
  try {
    const checkpoint = (JSON.parse(line) as { audit_checkpoint?: Partial<ShippedCheckpoint> }).audit_checkpoint;
    if (typeof checkpoint?.seq !== 'number' || typeof checkpoint.hash !== 'string' || typeof checkpoint.jws !== 'string') return undefined;
    return checkpoint as ShippedCheckpoint;
  } catch {
    return undefined;
  }
}

/** The `sealed_at` a shipped checkpoint's JWS says; undefined when it is no JWS of a checkpoint. */
function signedSealedAt(jws: string): number | undefined {
  try {
    const sealedAt = decodeJwt(jws).sealed_at;
    return typeof sealedAt === 'number' ? sealedAt : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Compares the checkpoints kept elsewhere (the `audit checkpoint` log lines in `file`, other lines
 * ignored) with the database's, after verifyChain has checked those: each shipped checkpoint must
 * be stored, identical or as a later version of it over the same events (the newest checkpoint is
 * signed again each minute, and each version is logged). One that is missing or differs means
 * history was cut or rewritten and re-signed, and a stored version older than a shipped one means
 * the row was put back, which the database alone cannot show. Returns how many were compared.
 */
export async function verifyAgainst(db: Db, file: string): Promise<number> {
  let compared = 0;
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    const shipped = shippedCheckpoint(line);
    if (shipped === undefined) continue;
    const stored = await checkpointAt(db, shipped.seq);
    if (stored === undefined) throw new AuditProblem(`checkpoint seq ${shipped.seq} in ${file} is missing from the database: the events it covers were cut`);
    const shippedAt = stored.jws === shipped.jws ? stored.sealed_at : signedSealedAt(shipped.jws);
    if (stored.hash !== shipped.hash || shippedAt === undefined) {
      throw new AuditProblem(`checkpoint seq ${shipped.seq} differs from the copy in ${file}: the chain up to it was rewritten and signed again`);
    }
    if (shippedAt > stored.sealed_at) {
      throw new AuditProblem(
        `checkpoint seq ${shipped.seq} was put back to an earlier version: the database holds the one sealed at ${isoTime(stored.sealed_at)}, ${file} a later one sealed at ${isoTime(shippedAt)}`,
      );
    }
    compared += 1;
  }
  return compared;
}
