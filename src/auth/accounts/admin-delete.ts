import { nowSeconds } from '../../runtime/clock.js';
import { inTransaction } from '../../db/database.js';
import { deleteAdminCredentials, markAdminDeleted } from '../../db/queries/admin-deletion.js';
import { deleteRecoveryCodes } from '../../db/queries/password-recoveries.js';
import type { AppContext } from '../context.js';
import { aboutAdmin, type RequestContext } from '../events.js';
import { endSessions } from '../sessions/end-sessions.js';
import { accountOf } from '../throttling/throttle-rules.js';

type Deps = Pick<AppContext, 'db' | 'clock'>;

export interface DeletedAdmin {
  readonly id: string;
  readonly school_key: string;
  readonly username: string;
  readonly username_key: string;
}

/**
 * Deletes an admin, in one transaction: the row is marked deleted (one conditional statement, so
 * of two deletions one proceeds), every session ends with its place in the revocation feed and the
 * `admin.deleted` event, and everything the admin signed in with is removed. A login that checked
 * the password before this cannot start a session after it: the credential epoch moved.
 * `false` when the admin was already deleted.
 */
export function deleteAdmin(deps: Deps, admin: DeletedAdmin, context: RequestContext, by: string): Promise<boolean> {
  return inTransaction(deps.db, async (trx) => {
    // Before the admin's row, in the order a password reset locks them (see changePassword).
    await deleteRecoveryCodes(trx, admin.id);
    if (!(await markAdminDeleted(trx, admin.id, nowSeconds(deps.clock)))) return false;
    const detail = (count: number) => `${by}; ${count} sessions ended`;
    const audit = { context, type: 'admin.deleted', about: aboutAdmin(admin), always: true, detail } as const;
    await endSessions({ ...deps, db: trx }, { scope: { adminId: admin.id }, reason: 'admin_deleted', audit });
    await deleteAdminCredentials(trx, admin.id, accountOf(admin.school_key, admin.username_key));
    return true;
  });
}
