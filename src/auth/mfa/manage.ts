import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import { deleteFactor, listFactors } from '../../db/queries/mfa-factors.js';
import { countRecoveryCodesLeft, deleteRecoveryCodes, replaceRecoveryCodes } from '../../db/queries/mfa-recovery-codes.js';
import { AppError } from '../../errors.js';
import { inTransaction } from '../../db/database.js';
import { aboutAdmin, recordEvent, type RequestContext } from '../events.js';
import { bearerEnded, epochOf, requireFactorManager, type MfaPrincipal } from './principal.js';
import { generateRecoveryCodes, hashRecoveryCode } from './recovery-codes.js';

/** An admin's confirmed factors (never their secrets) and how many recovery codes are left. */
export async function describeFactors(deps: AppContext, adminId: string) {
  const factors = await listFactors(deps.db, adminId);
  return {
    factors: factors.map((factor) => ({
      factorId: factor.id,
      type: factor.type,
      name: factor.name,
      createdAt: factor.created_at,
      lastUsedAt: factor.last_used_at,
      // Whether it can sign in alone: known for passkeys only, from the browser or from a sign-in.
      discoverable: factor.discoverable === null ? null : factor.discoverable === 1,
    })),
    recoveryCodesLeft: await countRecoveryCodesLeft(deps.db, adminId),
  };
}

/**
 * Removes one factor (aal2 once the admin has a confirmed one). Without any confirmed factor
 * left the recovery codes go too: they stand for a second factor the admin no longer has.
 */
export async function removeFactor(deps: AppContext, principal: MfaPrincipal, factorId: string, context: RequestContext): Promise<void> {
  await requireFactorManager(deps, principal, false);
  const adminId = principal.admin.id;
  // One transaction: the factor goes exactly when its event and its owner's notification are written.
  await inTransaction(deps.db, async (trx) => {
    if (!(await deleteFactor(trx, adminId, factorId))) throw new AppError('NOT_FOUND');
    if ((await listFactors(trx, adminId)).length === 0) await deleteRecoveryCodes(trx, adminId);
    await recordEvent(trx, deps.clock, context, { type: 'mfa.removed', ...aboutAdmin(principal.admin), detail: factorId });
  });
}

/** A new set of recovery codes (aal2); the old set stops working at once. */
export async function renewRecoveryCodes(deps: AppContext, principal: MfaPrincipal, context: RequestContext): Promise<string[]> {
  const { hasFactor } = await requireFactorManager(deps, principal, false);
  if (!hasFactor) throw new AppError('MFA_NOT_ENROLLED');
  const codes = generateRecoveryCodes();
  await inTransaction(deps.db, async (trx) => {
    if (!(await replaceRecoveryCodes(trx, principal.admin.id, codes.map(hashRecoveryCode), nowSeconds(deps.clock), epochOf(principal)))) {
      throw bearerEnded(principal);
    }
    await recordEvent(trx, deps.clock, context, { type: 'mfa.recovery_codes_renewed', ...aboutAdmin(principal.admin) });
  });
  return codes;
}
