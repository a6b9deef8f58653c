import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import { hasEmail } from '../../db/queries/admin-emails.js';
import { setSchoolRecovery, storeRecoveryCode } from '../../db/queries/password-recoveries.js';
import { inTransaction } from '../../db/database.js';
import { UsageError } from '../../errors.js';
import { CLI_CONTEXT, aboutAdmin, recordEvent } from '../events.js';
import { enqueueAdminEmail } from '../notifications.js';
import { requireAdmin, type AdminRef } from './admins.js';
import { generateRecoveryCode, hashPasswordRecoveryCode, recoveryLink, recoveryPayload, sealRecoveryCode } from './recovery-code.js';
import { requireSchool } from './schools.js';

type Deps = Pick<AppContext, 'db' | 'clock' | 'config'>;

/** What `admin reset-link` gives the operator: the link (or the code, without PASSWORD_RECOVERY_URL), or that it was mailed. */
export type RecoveryHandOver = { readonly sent: true } | { readonly sent: false; readonly link: string | undefined; readonly code: string };

/**
 * A one-time recovery code made by an operator, so the admin chooses the password and the
 * operator never learns it: printed as the front end's link for the operator to pass on, or, with
 * `send`, mailed to the admin's addresses (the operator then sees nothing of it). It replaces any
 * other code of the admin and lasts PASSWORD_RECOVERY_TTL.
 */
export async function createRecoveryLink(deps: Deps, ref: AdminRef, send: boolean): Promise<RecoveryHandOver> {
  const admin = await requireAdmin(deps, ref);
  if (!admin.password_hash.startsWith('$')) throw new UsageError(`admin ${JSON.stringify(ref.username)} signs in only through single sign-on: there is no password to recover`);
  if (admin.disabled_at !== null) throw new UsageError(`admin ${JSON.stringify(ref.username)} is disabled: enable them first (school-auth admin enable)`);
  if (send && !(await hasEmail(deps.db, admin.id))) throw new UsageError(`admin ${JSON.stringify(ref.username)} has no e-mail address: set one with school-auth admin email set, or leave out --send`);
  const code = generateRecoveryCode();
  const at = deps.clock.now();
  const now = nowSeconds(deps.clock);
  const expiresAt = now + deps.config.passwordRecovery.ttl;
  await inTransaction(deps.db, async (trx) => {
    await storeRecoveryCode(trx, { adminId: admin.id, codeHash: hashPasswordRecoveryCode(code), now, expiresAt });
    await recordEvent(trx, deps.clock, CLI_CONTEXT, { type: 'admin.recovery_link_created', ...aboutAdmin(admin), detail: send ? 'mailed' : 'printed' });
    if (!send) return;
    const payload = recoveryPayload(admin, CLI_CONTEXT, { at, expiresAt }, sealRecoveryCode(code, admin.id, deps.config.keyEncryption));
    await enqueueAdminEmail(trx, at, admin.id, payload);
  });
  if (send) return { sent: true };
  const url = deps.config.passwordRecovery.url;
  return { sent: false, code, link: url === undefined ? undefined : recoveryLink(url, { schoolId: admin.school_id, username: admin.username }, code) };
}

/** Whether a school's admins may recover a forgotten password by e-mail. */
export async function setSchoolPasswordRecovery(deps: Pick<AppContext, 'db' | 'clock'>, schoolId: string, on: boolean): Promise<void> {
  const school = await requireSchool(deps.db, schoolId);
  await inTransaction(deps.db, async (trx) => {
    await setSchoolRecovery(trx, school.key, on);
    await recordEvent(trx, deps.clock, CLI_CONTEXT, { type: 'school.password_recovery', schoolId: school.key, detail: on ? 'on' : 'off' });
  });
}
