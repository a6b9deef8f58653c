import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import { replaceRecoveryCodes } from '../../db/queries/mfa-recovery-codes.js';
import { aboutAdmin, recordEvent, type RequestContext } from '../events.js';
import type { LoginResult } from '../sessions/session-start.js';
import type { Assurance } from '../keys/assurance.js';
import { bearerEnded, epochOf, type MfaPrincipal } from './principal.js';
import { generateRecoveryCodes, hashRecoveryCode } from './recovery-codes.js';
import { completeSignIn } from './verify.js';

export interface Confirmation {
  readonly factorId: string;
  /** With the admin's first factor only. */
  readonly recoveryCodes: string[] | null;
  /** When enrolled with an mfa_token: the new factor also completes the sign-in. */
  readonly session?: LoginResult;
}

interface EnrolledFactor {
  readonly factorId: string;
  /** Whether the admin had a confirmed factor before this one. */
  readonly hasFactor: boolean;
  /** The audit event's detail: the factor's type and id. */
  readonly detail: string;
  /** What signing in with this factor proves, for the session an mfa_token enrollment starts. */
  readonly assurance: Assurance;
}

/**
 * What every confirmed enrollment does next: the first factor comes with 10 recovery codes, the
 * enrollment is recorded, and an enrollment made with an mfa_token (a `required` school's
 * sign-in) completes that sign-in, as Auth0's associate-then-verify does.
 */
export async function finishEnrollment(deps: AppContext, principal: MfaPrincipal, enrolled: EnrolledFactor, context: RequestContext): Promise<Confirmation> {
  const { factorId } = enrolled;
  const recoveryCodes = enrolled.hasFactor ? null : generateRecoveryCodes();
  if (recoveryCodes !== null) {
    const hashes = recoveryCodes.map(hashRecoveryCode);
    if (!(await replaceRecoveryCodes(deps.db, principal.admin.id, hashes, nowSeconds(deps.clock), epochOf(principal)))) throw bearerEnded(principal);
  }
  await recordEvent(deps.db, deps.clock, context, { type: 'mfa.enrolled', ...aboutAdmin(principal.admin), detail: enrolled.detail });
  if (principal.kind === 'access') return { factorId, recoveryCodes };
  const session = await completeSignIn(deps, principal.opened, enrolled.assurance, context);
  return { factorId, recoveryCodes, session };
}
