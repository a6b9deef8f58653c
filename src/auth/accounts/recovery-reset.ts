import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import { findAdminForLogin, updatePasswordHashIfActive } from '../../db/queries/admins.js';
import { isLiveRecoveryCode, spendRecoveryCode } from '../../db/queries/password-recoveries.js';
import { inTransaction } from '../../db/database.js';
import { isPasswordLoginOff } from '../../db/queries/sso-settings.js';
import { AppError } from '../../errors.js';
import { aboutAdmin, recordEvent, type RequestContext } from '../events.js';
import { canonicalKey } from '../identity.js';
import { checkNewPassword } from '../passwords/passwords.js';
import { endSessions } from '../sessions/end-sessions.js';
import { admitRecoveryGuess, forgetRecoveryGuesses } from '../throttling/recovery-rules.js';
import { accountOf } from '../throttling/throttle-rules.js';
import { unlockAccount } from '../throttling/throttle.js';
import { NewPasswordRejected } from './password-change.js';
import { hashPasswordRecoveryCode } from './recovery-code.js';

interface Reset {
  readonly schoolId: string;
  readonly username: string;
  readonly code: string;
  readonly newPassword: string;
}

/**
 * Sets a forgotten password with the code that was mailed. The new password is checked first,
 * from the body alone (a 422); then the guess is counted (429 past its limits); an unknown admin
 * or a wrong, spent or expired code is the same 401. The code is spent, the password set, every
 * session of the admin ended and the change recorded (which tells every address and the
 * platform) in one transaction; a lockout of the account is lifted. A second factor is untouched:
 * the next sign-in still asks for it.
 */
export async function resetForgottenPassword(deps: AppContext, reset: Reset, context: RequestContext): Promise<void> {
  const problem = checkNewPassword(reset.newPassword, { username: reset.username, schoolId: reset.schoolId });
  if (problem !== undefined) throw new NewPasswordRejected(problem);
  const account = accountOf(canonicalKey(reset.schoolId), canonicalKey(reset.username));
  const ip = context.ip ?? 'unknown';
  if (!(await admitRecoveryGuess(deps, account, ip))) throw new AppError('RECOVERY_THROTTLED');
  const admin = await findAdminForLogin(deps.db, canonicalKey(reset.schoolId), canonicalKey(reset.username));
  const codeHash = hashPasswordRecoveryCode(reset.code);
  // An unknown account costs what a known one does (the same look-up, an event), so the refusal's
  // time does not tell them apart.
  const refused = async () => {
    const who = admin === undefined ? { schoolId: canonicalKey(reset.schoolId), username: reset.username } : aboutAdmin(admin);
    await recordEvent(deps.db, deps.clock, context, { type: 'admin.password_recovery_failed', ...who });
    return new AppError('RECOVERY_CODE_INVALID');
  };
  const live = await isLiveRecoveryCode(deps.db, admin?.id ?? '', codeHash, nowSeconds(deps.clock));
  if (admin === undefined || !live) throw await refused();
  // A school whose password sign-in was turned off since has no password to set.
  if (await isPasswordLoginOff(deps.db, admin.school_key)) throw await refused();
  const hash = await deps.hasher.hash(reset.newPassword);
  const done = await inTransaction(deps.db, async (trx) => {
    const now = nowSeconds(deps.clock);
    // Of two resets with one code, one spends it; a disable or a suspension that committed first wins.
    if (!(await spendRecoveryCode(trx, admin.id, codeHash, now))) return false;
    if (!(await updatePasswordHashIfActive(trx, admin.id, hash, now))) return false;
    const audit = { context, type: 'admin.password_changed', about: aboutAdmin(admin), always: true, detail: (ended: number) => `password recovery: ${ended} sessions ended` } as const;
    await endSessions({ ...deps, db: trx }, { scope: { adminId: admin.id }, moveEpoch: true, reason: 'password_changed', audit });
    return true;
  });
  if (!done) throw await refused();
  await forgetRecoveryGuesses(deps.db, account, ip);
  await unlockAccount(deps.db, account);
}
