import { randomUUID } from 'node:crypto';
import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import { takeChallengeGuess } from '../../db/queries/mfa-challenges.js';
import { deleteUnconfirmedFactors, findFactor, insertFactor } from '../../db/queries/mfa-factors.js';
import { AppError } from '../../errors.js';
import type { RequestContext } from '../events.js';
import { PASSWORD_AND_OTP } from '../keys/assurance.js';
import { finishEnrollment, type Confirmation } from './enrollment-finish.js';
import { checkTotpFactor } from './factor-check.js';
import { epochOf, requireFactorManager, type MfaPrincipal } from './principal.js';
import { throttledSecondFactor } from './second-factor-throttle.js';
import { sealFactorSecret } from './secret-box.js';
import { generateTotpSecret, otpauthUri } from './totp.js';

/** The name authenticator apps show above the code. */
const TOTP_ISSUER = 'school-auth';

/**
 * Starts a TOTP enrollment: a new, unconfirmed factor whose secret is answered this once. Any
 * earlier unconfirmed factor of the admin is dropped, so abandoned enrollments do not pile up.
 * The enrolling request's address is kept with it, for the operator's incident checks.
 */
export async function startTotpEnrollment(deps: AppContext, principal: MfaPrincipal, context: RequestContext) {
  await requireFactorManager(deps, principal, true);
  const { admin } = principal;
  const factorId = randomUUID();
  const secret = generateTotpSecret();
  await deleteUnconfirmedFactors(deps.db, admin.id);
  await insertFactor(deps.db, {
    id: factorId,
    admin_id: admin.id,
    type: 'totp',
    name: 'Authenticator app',
    secret: sealFactorSecret(secret, factorId, deps.config.keyEncryption),
    confirmed_at: null,
    created_at: nowSeconds(deps.clock),
    last_used_at: null,
    last_used_step: null,
    enrolled_ip: context.ip,
  });
  return { factorId, secret, otpauthUri: otpauthUri(secret, TOTP_ISSUER, `${admin.school_id}:${admin.username}`) };
}

/**
 * Confirms a TOTP factor with a first code. Every guess goes through the admin's second-factor
 * throttle, as at sign-in: otherwise a stolen aal1 access token would buy unlimited guesses at a
 * code. Through an mfa_token the guess also counts against the token's 5 (taken first, as in
 * verifySecondFactor), and the right code completes the sign-in too, so the admin need not wait
 * 30 s for a second code.
 */
export async function confirmTotp(deps: AppContext, principal: MfaPrincipal, factorId: string, code: string, context: RequestContext): Promise<Confirmation> {
  const { hasFactor } = await requireFactorManager(deps, principal, true);
  const { admin } = principal;
  const factor = await findFactor(deps.db, admin.id, factorId);
  if (factor === undefined || factor.confirmed_at !== null) throw new AppError('NOT_FOUND');
  if (principal.kind === 'mfa_token' && !(await takeChallengeGuess(deps.db, principal.opened.ref, nowSeconds(deps.clock)))) {
    throw new AppError('MFA_TOKEN_INVALID');
  }
  const check = async () => ((await checkTotpFactor(deps, factor, code, epochOf(principal))) ? PASSWORD_AND_OTP : undefined);
  const assurance = await throttledSecondFactor(deps, admin, context, `wrong totp confirming ${factorId}`, check);
  return finishEnrollment(deps, principal, { factorId, hasFactor, detail: `totp ${factorId}`, assurance }, context);
}
