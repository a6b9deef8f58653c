import { nowSeconds } from '../../runtime/clock.js';
import type { Db } from '../../db/database.js';
import { moveKnownAddresses } from '../../db/queries/admin-deletion.js';
import { replaceEmails } from '../../db/queries/admin-emails.js';
import { setAdminDisabled } from '../../db/queries/admins.js';
import { deleteRecoveryCodes } from '../../db/queries/password-recoveries.js';
import { heldBy, updateScimAdmin, type ScimAdminRow } from '../../db/queries/scim-admins.js';
import type { AppContext } from '../context.js';
import { aboutAdmin, recordEvent } from '../events.js';
import { canonicalKey } from '../identity.js';
import { endSessions } from '../sessions/end-sessions.js';
import { accountOf } from '../throttling/throttle-rules.js';
import { followDirectoryAddress } from './directory-link.js';
import { ScimError } from './scim-error.js';
import { checkUserName, directoryAddresses, linkingAddress, type ScimActor } from './user-fields.js';
import type { UserInput } from './user-input.js';

type Deps = Pick<AppContext, 'db' | 'clock'>;

/** The names of the attributes that `input` changes on `row`, for the audit event (never their values). */
function changedAttributes(row: ScimAdminRow, input: UserInput, profile: string): string[] {
  const before = row.scim_profile === null ? {} : (JSON.parse(row.scim_profile) as Record<string, unknown>);
  const after = input.profile;
  const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]));
  if (row.username !== input.userName) changed.unshift('userName');
  if (row.external_id !== input.externalId) changed.unshift('externalId');
  return row.scim_profile === profile && changed.length === 0 ? [] : changed.sort();
}

/**
 * Makes the admin `row` (read and locked in this transaction) what `input` says: one write of the
 * row, the directory's addresses, the SSO link waiting for them, and `active`, whose change to
 * false ends every session with its place in the revocation feed, all in the caller's transaction.
 */
export async function applyUser(deps: Deps & { db: Db }, actor: ScimActor, row: ScimAdminRow, input: UserInput & { active: boolean; externalId: string | null }): Promise<void> {
  checkUserName(input.userName);
  const now = nowSeconds(deps.clock);
  const usernameKey = canonicalKey(input.userName);
  const held = await heldBy(deps.db, row.school_key, row.id, { usernameKey, externalId: input.externalId });
  if (held !== undefined) throw new ScimError(409, 'uniqueness', `${held} is already used by another admin of this school`);
  const deactivating = row.disabled_at === null && !input.active;
  // Before the admin's row, in the order a password reset locks them (see changePassword).
  if (deactivating) await deleteRecoveryCodes(deps.db, row.id);
  const profile = JSON.stringify(input.profile);
  const changed = changedAttributes(row, input, profile);
  // meta.lastModified moves only when the resource does: a directory re-sends unchanged users every cycle.
  const modified = changed.length > 0 || (row.disabled_at === null) !== input.active;
  const changes = { username: input.userName, username_key: usernameKey, external_id: input.externalId, scim_profile: profile, modified_at: modified ? now : row.modified_at };
  if (!(await updateScimAdmin(deps.db, row.id, changes))) throw new ScimError(409, 'uniqueness', 'userName or externalId is already used by another admin of this school');
  await moveKnownAddresses(deps.db, accountOf(row.school_key, row.username_key), accountOf(row.school_key, usernameKey));
  await replaceEmails(deps.db, row.id, 'scim', directoryAddresses(input), now);
  await followDirectoryAddress(deps.db, row, linkingAddress(input), now);
  const about = aboutAdmin({ ...row, username: input.userName });
  if (changed.length > 0) await recordEvent(deps.db, deps.clock, actor.context, { type: 'admin.updated', ...about, detail: `${actor.by}: ${changed.join(', ')}` });
  if (row.disabled_at !== null && input.active) {
    await setAdminDisabled(deps.db, row.id, false, now);
    await recordEvent(deps.db, deps.clock, actor.context, { type: 'admin.enabled', ...about, detail: actor.by });
  }
  if (!deactivating) return;
  await setAdminDisabled(deps.db, row.id, true, now);
  const audit = { context: actor.context, type: 'admin.disabled', about, always: true, detail: (count: number) => `${actor.by}; ${count} sessions ended` } as const;
  await endSessions(deps, { scope: { adminId: row.id }, moveEpoch: true, reason: 'admin_disabled', audit });
}
