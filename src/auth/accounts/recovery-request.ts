import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import { hasEmail } from '../../db/queries/admin-emails.js';
import { findAdminForLogin, type AdminForLogin } from '../../db/queries/admins.js';
import { storeRecoveryCode } from '../../db/queries/password-recoveries.js';
import { findSchool } from '../../db/queries/schools.js';
import { isPasswordLoginOff } from '../../db/queries/sso-settings.js';
import { inTransaction } from '../../db/database.js';
import { aboutAdmin, recordEvent, type RequestContext } from '../events.js';
import { canonicalKey } from '../identity.js';
import { enqueueAdminEmail } from '../notifications.js';
import { admitRecoveryRequest } from '../throttling/recovery-rules.js';
import { generateRecoveryCode, hashPasswordRecoveryCode, recoveryPayload, sealRecoveryCode } from './recovery-code.js';

/** Codes one admin may be mailed an hour: enough for a lost e-mail, too few to flood an inbox. */
const REQUESTS_PER_HOUR = 5;

/** Whether the admin may recover by e-mail: enabled, with a password, an address, and a school that allows it. */
async function mayRecover(deps: Pick<AppContext, 'db'>, admin: AdminForLogin): Promise<boolean> {
  if (admin.disabled_at !== null || admin.school_suspended_at !== null) return false;
  // An admin who signs in only through the IdP has no password to recover (its hash is no PHC string).
  if (!admin.password_hash.startsWith('$')) return false;
  const school = await findSchool(deps.db, admin.school_key);
  if (school?.password_recovery !== 1) return false;
  if (await isPasswordLoginOff(deps.db, admin.school_key)) return false;
  return hasEmail(deps.db, admin.id);
}

/**
 * Mails a recovery code when the admin exists and may recover; otherwise does nothing, silently.
 * The caller has already answered (the same 202 for everyone): nothing here can be observed by
 * the client, neither its outcome nor its time. The code, the event and the e-mail's outbox row
 * are one transaction; a new code replaces the admin's previous one.
 */
export async function requestPasswordRecovery(deps: AppContext, who: { schoolId: string; username: string }, context: RequestContext): Promise<void> {
  if (!(await admitRecoveryRequest(deps, context.ip ?? 'unknown'))) return;
  const admin = await findAdminForLogin(deps.db, canonicalKey(who.schoolId), canonicalKey(who.username));
  if (admin === undefined || !(await mayRecover(deps, admin))) return;
  const code = generateRecoveryCode();
  const at = deps.clock.now();
  const now = nowSeconds(deps.clock);
  const expiresAt = now + deps.config.passwordRecovery.ttl;
  await inTransaction(deps.db, async (trx) => {
    const stored = await storeRecoveryCode(trx, { adminId: admin.id, codeHash: hashPasswordRecoveryCode(code), now, expiresAt }, { requests: REQUESTS_PER_HOUR, window: 3600 });
    if (!stored) return;
    const about = aboutAdmin(admin);
    await recordEvent(trx, deps.clock, context, { type: 'admin.password_recovery_requested', ...about });
    const payload = recoveryPayload(admin, context, { at, expiresAt }, sealRecoveryCode(code, admin.id, deps.config.keyEncryption));
    await enqueueAdminEmail(trx, at, admin.id, payload);
  });
}
