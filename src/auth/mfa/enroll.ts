import { randomUUID } from 'node:crypto';
import { nowSeconds } from '../../clock.js';
import type { AppContext } from '../../context.js';
import { takeChallengeGuess } from '../../db/queries/mfa-challenges.js';
import { deleteUnconfirmedFactors, findFactor, insertFactor } from '../../db/queries/mfa-factors.js';
import { replaceRecoveryCodes } from '../../db/queries/mfa-recovery-codes.js';
import { AppError } from '../../errors.js';
import { aboutAdmin, recordEvent, type RequestContext } from '../audit.js';
import type { LoginResult } from '../login.js';
import { PASSWORD_AND_OTP } from './assurance.js';
import { checkTotpFactor } from './factor-check.js';
import { requireFactorManager, type MfaPrincipal } from './principal.js';
import { generateRecoveryCodes, hashRecoveryCode } from './recovery-codes.js';
import { sealFactorSecret } from './secret-box.js';
import { generateTotpSecret, otpauthUri } from './totp.js';
import { completeSignIn } from './verify.js';

/** The name authenticator apps show above the code. */
const TOTP_ISSUER = 'school-auth';

/**
 * Starts a TOTP enrollment: a new, unconfirmed factor whose secret is answered this once. Any
 * earlier unconfirmed factor of the admin is dropped, so abandoned enrollments do not pile up.
 */
export async function startTotpEnrollment(deps: AppContext, principal: MfaPrincipal) {
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
  });
  return { factorId, secret, otpauthUri: otpauthUri(secret, TOTP_ISSUER, `${admin.school_id}:${admin.username}`) };
}

export interface Confirmation {
  readonly factorId: string;
  /** With the admin's first factor only. */
  readonly recoveryCodes: string[] | null;
  /** When enrolled with an mfa_token: the first code also completes the sign-in. */
  readonly session?: LoginResult;
}

/**
 * Confirms a TOTP factor with a first code. Through an mfa_token the guess counts against the
 * token's 5, and the right code completes the sign-in too (as Auth0's associate-then-verify does),
 * so the admin need not wait 30 s for a second code.
 */
export async function confirmTotp(deps: AppContext, principal: MfaPrincipal, factorId: string, code: string, context: RequestContext): Promise<Confirmation> {
  const { hasFactor } = await requireFactorManager(deps, principal, true);
  const factor = await findFactor(deps.db, principal.admin.id, factorId);
  if (factor === undefined || factor.confirmed_at !== null) throw new AppError('NOT_FOUND');
  if (principal.kind === 'mfa_token' && !(await takeChallengeGuess(deps.db, principal.opened.tokenHash, nowSeconds(deps.clock)))) {
    throw new AppError('MFA_TOKEN_INVALID');
  }
  if (!(await checkTotpFactor(deps, factor, code))) throw new AppError('MFA_INVALID');
  const recoveryCodes = hasFactor ? null : generateRecoveryCodes();
  if (recoveryCodes !== null) await replaceRecoveryCodes(deps.db, principal.admin.id, recoveryCodes.map(hashRecoveryCode), nowSeconds(deps.clock));
  await recordEvent(deps.db, deps.clock, context, { type: 'mfa.enrolled', ...aboutAdmin(principal.admin), detail: `totp ${factorId}` });
  if (principal.kind === 'access') return { factorId, recoveryCodes };
  const session = await completeSignIn(deps, principal.opened, PASSWORD_AND_OTP, context);
  return { factorId, recoveryCodes, session };
}
