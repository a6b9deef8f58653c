import { nowSeconds } from '../../runtime/clock.js';
import { inTransaction } from '../../db/database.js';
import { moveEpochKeeping, restampSession } from '../../db/queries/other-sessions.js';
import type { AppContext } from '../context.js';
import { endSessions, type EndedSession, type SessionEnding } from './end-sessions.js';

interface KeepOneSession {
  readonly adminId: string;
  /** The session that asked: it survives, re-stamped at the new credential epoch. */
  readonly keepSessionId: string;
  readonly reason: string;
  /** Set together with the epoch move: a password change. */
  readonly passwordHash?: string;
  readonly audit: SessionEnding['audit'];
}

/**
 * Ends every session of an admin but one, those being created included, in one transaction: the
 * credential epoch moves on (so a login that checked the password before cannot leave a session
 * behind), the others end through endSessions, and the kept session is re-stamped at the new
 * epoch. Undefined, having changed nothing, when the kept session itself ended meanwhile.
 */
export function endOtherSessions(deps: Pick<AppContext, 'db' | 'clock'>, request: KeepOneSession): Promise<EndedSession[] | undefined> {
  return inTransaction(deps.db, async (trx) => {
    const password = request.passwordHash === undefined ? undefined : { hash: request.passwordHash, now: nowSeconds(deps.clock) };
    const epoch = await moveEpochKeeping(trx, request.adminId, request.keepSessionId, password);
    if (epoch === undefined) return undefined;
    const scope = { adminId: request.adminId, exceptSessionId: request.keepSessionId };
    const ended = await endSessions({ ...deps, db: trx }, { scope, reason: request.reason, audit: { ...request.audit, always: true } });
    await restampSession(trx, request.keepSessionId, epoch);
    return ended;
  });
}
