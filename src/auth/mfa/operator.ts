import type { AppContext } from '../context.js';
import { inTransaction } from '../../db/database.js';
import { deleteChallenges } from '../../db/queries/mfa-challenges.js';
import { deleteAllFactors, listFactors } from '../../db/queries/mfa-factors.js';
import { countRecoveryCodesLeft, deleteRecoveryCodes } from '../../db/queries/mfa-recovery-codes.js';
import { deleteMfaThrottle, isMfaLocked } from '../../db/queries/mfa-throttle.js';
import { setSchoolMfaPolicy } from '../../db/queries/schools.js';
import { UsageError } from '../../errors.js';
import { type AdminRef, requireAdmin } from '../accounts/admins.js';
import { CLI_CONTEXT, aboutAdmin, recordEvent } from '../events.js';
import { endSessions } from '../sessions/end-sessions.js';
import { requireSchool } from '../accounts/schools.js';

type Deps = Pick<AppContext, 'db' | 'clock'>;

const MFA_POLICIES = ['optional', 'required'] as const;

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
    const audit = { context: CLI_CONTEXT, type: 'school.mfa_policy', about: { schoolId: school.key } } as const;
    if (known !== 'required') {
      await recordEvent(trx, deps.clock, audit.context, { type: audit.type, ...audit.about, detail: known });
      return 0;
    }
    const detail = (count: number) => `${known}; ${count} password-only sessions ended`;
    const ended = await endSessions({ ...deps, db: trx }, { scope: { schoolKey: school.key, acr: 'aal1' }, reason: 'mfa_required', audit: { ...audit, always: true, detail } });
    return ended.length;
  });
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
  return inTransaction(deps.db, async (trx) => {
    const factors = await deleteAllFactors(trx, admin.id);
    await deleteRecoveryCodes(trx, admin.id);
    await deleteChallenges(trx, { adminId: admin.id });
    await deleteMfaThrottle(trx, admin.id);
    const detail = (count: number) => `${factors} factors removed; ${count} sessions ended`;
    const audit = { context: CLI_CONTEXT, type: 'mfa.reset', about: aboutAdmin(admin), always: true, detail } as const;
    const ended = await endSessions({ ...deps, db: trx }, { scope: { adminId: admin.id }, moveEpoch: true, reason: 'mfa_reset', audit });
    return { factors, sessions: ended.length };
  });
}
