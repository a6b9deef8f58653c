import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import { inTransaction } from '../../db/database.js';
import { deleteChallenges } from '../../db/queries/mfa-challenges.js';
import { deleteAllFactors, listFactors } from '../../db/queries/mfa-factors.js';
import { countRecoveryCodesLeft, deleteRecoveryCodes } from '../../db/queries/mfa-recovery-codes.js';
import { deleteMfaThrottle, isMfaLocked } from '../../db/queries/mfa-throttle.js';
import { setSchoolMfaPolicy } from '../../db/queries/schools.js';
import { endAllSessions } from '../../db/queries/sessions.js';
import { UsageError } from '../../errors.js';
import { type AdminRef, requireAdmin } from '../accounts/admins.js';
import { CLI_CONTEXT, aboutAdmin, recordEvent } from '../audit/events.js';
import { requireSchool } from '../accounts/schools.js';

type Deps = Pick<AppContext, 'db' | 'clock'>;

export const MFA_POLICIES = ['optional', 'required'] as const;
export type MfaPolicy = (typeof MFA_POLICIES)[number];

export async function setMfaPolicy(deps: Deps, schoolId: string, policy: string): Promise<void> {
  const known = MFA_POLICIES.find((candidate) => candidate === policy);
  if (known === undefined) throw new UsageError(`the policy must be "optional" or "required", not ${JSON.stringify(policy)}`);
  const school = await requireSchool(deps.db, schoolId);
  await setSchoolMfaPolicy(deps.db, school.key, known);
  await recordEvent(deps.db, deps.clock, CLI_CONTEXT, { type: 'school.mfa_policy', schoolId: school.key, detail: known });
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
