import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import { inTransaction } from '../../db/database.js';
import { deleteChallenges } from '../../db/queries/mfa-challenges.js';
import { deleteAllFactors, listFactors } from '../../db/queries/mfa-factors.js';
import { countRecoveryCodesLeft, deleteRecoveryCodes } from '../../db/queries/mfa-recovery-codes.js';
import { deleteMfaThrottle, isMfaLocked } from '../../db/queries/mfa-throttle.js';
import { setSchoolMfaPolicy } from '../../db/queries/schools.js';
import { revokeSessions } from '../../db/queries/session-ending.js';
import { endAllSessions } from '../../db/queries/sessions.js';
import { UsageError } from '../../errors.js';
import { type AdminRef, requireAdmin } from '../accounts/admins.js';
import { CLI_CONTEXT, aboutAdmin, recordEvent } from '../audit/events.js';
import { requireSchool } from '../accounts/schools.js';

type Deps = Pick<AppContext, 'db' | 'clock'>;

export const MFA_POLICIES = ['optional', 'required'] as const;
export type MfaPolicy = (typeof MFA_POLICIES)[number];

/**
 * Sets a school's second-factor policy. `required` also ends, in the same transaction, every
 * password-only (aal1) session of the school's admins: they would otherwise go on refreshing for
 * up to the refresh lifetime. Sessions signed in with a second factor stay.
 */
export async function setMfaPolicy(deps: Deps, schoolId: string, policy: string): Promise<{ sessionsEnded: number }> {
  const known = MFA_POLICIES.find((candidate) => candidate === policy);
  if (known === undefined) throw new UsageError(`the policy must be "optional" or "required", not ${JSON.stringify(policy)}`);
  const school = await requireSchool(deps.db, schoolId);
  const sessionsEnded = await inTransaction(deps.db, async (trx) => {
    await setSchoolMfaPolicy(trx, school.key, known);
    if (known !== 'required') return 0;
    return (await revokeSessions(trx, { schoolKey: school.key, acr: 'aal1' }, 'mfa_required', nowSeconds(deps.clock))).length;
  });
  const detail = known === 'required' ? `${known}; ${sessionsEnded} password-only sessions ended` : known;
  await recordEvent(deps.db, deps.clock, CLI_CONTEXT, { type: 'school.mfa_policy', schoolId: school.key, detail });
  return { sessionsEnded };
}

/** What an operator may see of an admin's second factor: never a secret. */
export async function describeAdminMfa(deps: Deps, ref: AdminRef) {
  const admin = await requireAdmin(deps, ref);
  return {
    admin,
    factors: await listFactors(deps.db, admin.id),
    recoveryCodesLeft: await countRecoveryCodesLeft(deps.db, admin.id),
    locked: await isMfaLocked(deps.db, admin.id),
  };
}

/**
 * Removes every factor, recovery code and pending challenge of an admin, lifts the lock, and
 * ends their sessions: whoever held the lost factor is signed out too. Recorded.
 */
export async function resetAdminMfa(deps: Deps, ref: AdminRef): Promise<{ factors: number; sessions: number }> {
  const admin = await requireAdmin(deps, ref);
  const now = nowSeconds(deps.clock);
  const result = await inTransaction(deps.db, async (trx) => {
    const factors = await deleteAllFactors(trx, admin.id);
    await deleteRecoveryCodes(trx, admin.id);
    await deleteChallenges(trx, { adminId: admin.id });
    await deleteMfaThrottle(trx, admin.id);
    const sessions = (await endAllSessions(trx, { adminId: admin.id }, 'mfa_reset', now)).length;
    return { factors, sessions };
  });
  await recordEvent(deps.db, deps.clock, CLI_CONTEXT, {
    type: 'mfa.reset',
    ...aboutAdmin(admin),
    detail: `${result.factors} factors removed; ${result.sessions} sessions ended`,
  });
  return result;
}
