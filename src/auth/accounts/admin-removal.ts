import { deletedAdmins } from '../../db/queries/admin-deletion.js';
import { findAdminForLogin } from '../../db/queries/admins.js';
import { UsageError } from '../../errors.js';
import type { AppContext } from '../context.js';
import { CLI_CONTEXT } from '../events.js';
import { canonicalKey } from '../identity.js';
import { deleteAdmin, type DeletedAdmin } from './admin-delete.js';
import { eraseAdmin } from './admin-erase.js';
import type { AdminRef } from './admins.js';
import { requireSchool } from './schools.js';

type Deps = Pick<AppContext, 'db' | 'clock'>;

export type FoundAdmin = DeletedAdmin & { readonly deleted: boolean };

/**
 * The admin `ref` names: an account, or one deleted whose data is not erased yet (found by the
 * username it had), so that a deletion request that comes after a SCIM delete can still be met.
 */
export async function findAdminOrDeleted(deps: Pick<AppContext, 'db'>, ref: AdminRef): Promise<FoundAdmin> {
  const school = await requireSchool(deps.db, ref.schoolId);
  const key = canonicalKey(ref.username);
  const live = await findAdminForLogin(deps.db, school.key, key);
  if (live !== undefined) return { ...live, deleted: false };
  const deleted = (await deletedAdmins(deps.db, school.key)).find((admin) => canonicalKey(admin.username) === key);
  if (deleted !== undefined) return { ...deleted, deleted: true };
  throw new UsageError(`admin ${JSON.stringify(ref.username)} does not exist in school ${JSON.stringify(school.school_id)} (nor was deleted without erasure)`);
}

/**
 * `admin delete`: the account goes (sessions first, then everything it signed in with); with
 * `erase`, the person's data leaves the audit trail, sessions and notifications too.
 */
export async function removeAdmin(deps: Deps, ref: AdminRef, erase: boolean): Promise<'deleted' | 'erased'> {
  const admin = await findAdminOrDeleted(deps, ref);
  if (erase) {
    await eraseAdmin(deps, admin, CLI_CONTEXT, 'by an operator');
    return 'erased';
  }
  if (admin.deleted) throw new UsageError(`admin ${JSON.stringify(ref.username)} is already deleted; erase their data with --erase`);
  await deleteAdmin(deps, admin, CLI_CONTEXT, 'by an operator');
  return 'deleted';
}
