import { randomUUID } from 'node:crypto';
import { nowSeconds } from '../../runtime/clock.js';
import { inTransaction } from '../../db/database.js';
import { replaceEmails } from '../../db/queries/admin-emails.js';
import { findScimAdmin, heldBy, insertScimAdmin, type ScimAdminRow } from '../../db/queries/scim-admins.js';
import { deleteAdmin } from '../accounts/admin-delete.js';
import type { AppContext } from '../context.js';
import { recordEvent } from '../events.js';
import { canonicalKey } from '../identity.js';
import { SSO_ONLY_PASSWORD_HASH } from '../sso/links.js';
import { followDirectoryAddress } from './directory-link.js';
import { applyPatch } from './patch.js';
import { ScimError } from './scim-error.js';
import { applyUser } from './user-apply.js';
import { checkUserName, directoryAddresses, linkingAddress, type ScimActor } from './user-fields.js';
import { readUser, type UserInput } from './user-input.js';
import { userResource } from './user-resource.js';

type Deps = Pick<AppContext, 'db' | 'clock'>;

const notFound = (id: string) => new ScimError(404, undefined, `User ${id} not found`);

/**
 * Creates an admin from the directory, without a password: in a school with an identity provider
 * they sign in through it (the directory's address links them), elsewhere an operator gives them
 * one with `admin passwd`. The id is the access tokens' subject.
 */
export async function createUser(deps: Deps, actor: ScimActor, body: unknown): Promise<string> {
  const input = readUser(body);
  checkUserName(input.userName);
  const addresses = directoryAddresses(input);
  const { schoolKey } = actor.client;
  const id = randomUUID();
  const now = nowSeconds(deps.clock);
  const externalId = input.externalId ?? null;
  await inTransaction(deps.db, async (trx) => {
    const usernameKey = canonicalKey(input.userName);
    const held = await heldBy(trx, schoolKey, id, { usernameKey, externalId });
    if (held !== undefined) throw new ScimError(409, 'uniqueness', `${held} is already used by another admin of this school`);
    const admin = { id, school_key: schoolKey, username_key: usernameKey, username: input.userName, external_id: externalId, scim_profile: JSON.stringify(input.profile) };
    const inserted = await insertScimAdmin(trx, { ...admin, password_hash: SSO_ONLY_PASSWORD_HASH, disabled_at: input.active === false ? now : null, created_at: now, password_changed_at: now });
    if (!inserted) throw new ScimError(409, 'uniqueness', 'userName or externalId is already used by another admin of this school');
    await replaceEmails(trx, id, 'scim', addresses, now);
    await followDirectoryAddress(trx, admin, linkingAddress(input), now);
    const state = input.active === false ? 'disabled, no password' : 'no password';
    await recordEvent(trx, deps.clock, actor.context, { type: 'admin.created', schoolId: schoolKey, username: input.userName, adminId: id, detail: `${actor.by}; ${state}` });
  });
  return id;
}

/** Runs `change` on the school's admin `id`, read and locked in one transaction; 404 when there is none. */
function withUser<T>(deps: Deps, actor: ScimActor, id: string, change: (trx: Deps, row: ScimAdminRow) => Promise<T>): Promise<T> {
  return inTransaction(deps.db, async (trx) => {
    const row = await findScimAdmin(trx, actor.client.schoolKey, id, true);
    if (row === undefined) throw notFound(id);
    return change({ ...deps, db: trx }, row);
  });
}

/** PUT: the resource becomes what was sent; `active` and `externalId` left out keep their values. */
export function replaceUser(deps: Deps, actor: ScimActor, id: string, body: unknown): Promise<void> {
  const input = readUser(body);
  return withUser(deps, actor, id, async (trx, row) => {
    const externalId = input.externalId === undefined ? row.external_id : input.externalId;
    await applyUser(trx, actor, row, { ...input, externalId, active: input.active ?? row.disabled_at === null });
  });
}

/** PATCH: the operations are applied to the resource as GET shows it, and the result stored as a PUT would. */
export function patchUser(deps: Deps, actor: ScimActor, id: string, body: unknown, base: string): Promise<void> {
  return withUser(deps, actor, id, async (trx, row) => {
    const current = userResource(row, [], base);
    const patched: UserInput = readUser(applyPatch(current, body));
    await applyUser(trx, actor, row, { ...patched, externalId: patched.externalId ?? null, active: patched.active ?? row.disabled_at === null });
  });
}

/** DELETE: the admin is gone at once (sessions ended, in the feed); the audit trail keeps its events. */
export async function deleteUser(deps: Deps, actor: ScimActor, id: string): Promise<void> {
  const deleted = await inTransaction(deps.db, async (trx) => {
    const row = await findScimAdmin(trx, actor.client.schoolKey, id, true);
    return row !== undefined && (await deleteAdmin({ ...deps, db: trx }, row, actor.context, actor.by));
  });
  if (!deleted) throw notFound(id);
}
