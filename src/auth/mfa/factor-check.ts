import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import type { ChallengeRef } from '../../db/queries/mfa-challenges.js';
import { claimTotpStep, listFactors, type MfaFactor } from '../../db/queries/mfa-factors.js';
import { useRecoveryCode } from '../../db/queries/mfa-recovery-codes.js';
import { PASSWORD_AND_OTP, PASSWORD_AND_RECOVERY_CODE, type Assurance } from '../keys/assurance.js';
import { checkPasskey } from './passkey-sign-in.js';
import { hashRecoveryCode } from './recovery-codes.js';
import { openFactorSecret } from './secret-box.js';
import { matchTotpStep } from './totp.js';

/**
 * Checks a TOTP code against one factor and, if it matches, claims its time step: a step no
 * later than the last one accepted is refused, so each code (and each earlier code) works once.
 * The claim holds only at `credentialEpoch`, the one the bearer was checked at.
 */
export async function checkTotpFactor(deps: AppContext, factor: MfaFactor, code: string, credentialEpoch: number): Promise<boolean> {
  const secret = openFactorSecret(factor.secret, factor.id, deps.config.keyEncryption);
  const step = matchTotpStep(secret, code, deps.clock.now());
  if (step === undefined) return false;
  return claimTotpStep(deps.db, factor.id, step, nowSeconds(deps.clock), credentialEpoch);
}

/** What answers a sign-in's challenge: a code (TOTP or recovery) or a passkey's assertion. */
export type SecondFactorProof =
  | { readonly method: 'totp' | 'recovery_code'; readonly code: string }
  | { readonly method: 'webauthn'; readonly credential: unknown };

/** The sign-in a second factor answers: its mfa_token, and the credential epoch it was issued at. */
interface SignInChallenge {
  readonly ref: ChallengeRef;
  readonly credentialEpoch: number;
}

/** The assurance a right answer to the sign-in proves, or undefined for a wrong (or reused) one. */
export async function checkSecondFactor(deps: AppContext, adminId: string, signIn: SignInChallenge, proof: SecondFactorProof): Promise<Assurance | undefined> {
  if (proof.method === 'webauthn') return checkPasskey(deps, adminId, signIn.ref, proof.credential);
  if (proof.method === 'recovery_code') {
    const used = await useRecoveryCode(deps.db, adminId, hashRecoveryCode(proof.code), nowSeconds(deps.clock));
    return used ? PASSWORD_AND_RECOVERY_CODE : undefined;
  }
  for (const factor of await listFactors(deps.db, adminId)) {
    if (factor.type === 'totp' && (await checkTotpFactor(deps, factor, proof.code, signIn.credentialEpoch))) return PASSWORD_AND_OTP;
  }
  return undefined;
}
