import { nowSeconds } from '../../runtime/clock.js';
import { replaceEmails } from '../../db/queries/admin-emails.js';
import { UsageError } from '../../errors.js';
import type { AppContext } from '../context.js';
import { CLI_CONTEXT, aboutAdmin, recordEvent } from '../events.js';
import { requireAdmin, type AdminRef } from './admins.js';

const ADDRESS = /^[^\s@<>",;]{1,64}@[a-z0-9.-]{1,253}\.[a-z0-9-]{2,63}$/i;

/** An address as stored: trimmed, its domain lowercase; a UsageError naming `option` when it is none. */
export function emailAddress(raw: string, option: string): string {
  const address = raw.trim();
  if (!ADDRESS.test(address)) throw new UsageError(`${option}: ${JSON.stringify(raw)} is not an e-mail address`);
  const at = address.lastIndexOf('@');
  return `${address.slice(0, at)}@${address.slice(at + 1).toLowerCase()}`;
}

/**
 * Sets the address an operator gave the admin (null removes it); an address the IdP asserted
 * at single sign-on stays. The admin is told of changes to the account at every address.
 */
export async function setAdminEmail(deps: Pick<AppContext, 'db' | 'clock'>, ref: AdminRef, raw: string | null): Promise<void> {
  const address = raw === null ? null : emailAddress(raw, '--email');
  const admin = await requireAdmin(deps, ref);
  await deps.db.transaction().execute(async (trx) => {
    await replaceEmails(trx, admin.id, 'operator', address === null ? [] : [{ address, type: null }], nowSeconds(deps.clock));
    await recordEvent(trx, deps.clock, CLI_CONTEXT, { type: 'admin.email_changed', ...aboutAdmin(admin), detail: address ?? 'removed' });
  });
}
