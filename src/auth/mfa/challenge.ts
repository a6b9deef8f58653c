import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import { findAdminById, type AdminForLogin } from '../../db/queries/admins.js';
import { findLiveChallenge, insertChallenge, type ChallengePurpose, type ChallengeRef } from '../../db/queries/mfa-challenges.js';
import { listFactors } from '../../db/queries/mfa-factors.js';
import { countRecoveryCodesLeft } from '../../db/queries/mfa-recovery-codes.js';
import type { Db } from '../../db/database.js';
import { AppError } from '../../errors.js';
import type { Federation } from '../sessions/session-start.js';
import { MFA_TOKEN_LIFETIME, generateMfaToken, hashMfaToken } from './mfa-token.js';

type MfaMethod = 'totp' | 'webauthn' | 'recovery_code';

/** What a right password answers when a second factor must follow (the 403 with an mfa_token, docs/second-factor.md). */
export interface SecondFactorChallenge {
  readonly mfaToken: string;
  readonly methods: readonly MfaMethod[];
  readonly expiresIn: number;
  /** True when the admin has no factor yet and must enroll one (a `required` school). */
  readonly enrollment: boolean;
}

/** The methods an admin can answer a challenge with: their confirmed factors' types, then recovery codes. */
async function availableMethods(db: Db, adminId: string): Promise<MfaMethod[]> {
  const factors = await listFactors(db, adminId);
  if (factors.length === 0) return [];
  const methods = [...new Set(factors.map((factor) => factor.type as MfaMethod))];
  if ((await countRecoveryCodesLeft(db, adminId)) > 0) methods.push('recovery_code');
  return methods;
}

/**
 * Decides, once the password is known to be right, whether the session must wait for a second
 * factor; if so it stores a challenge and returns its mfa_token. Undefined: sign in as before.
 * Only reached after a right password (or an IdP's sign-in, `federation`, which the session that
 * follows keeps), so the extra queries tell nobody whether an account exists.
 */
export async function secondFactorChallenge(deps: AppContext, admin: AdminForLogin, federation?: Federation): Promise<SecondFactorChallenge | undefined> {
  const methods = await availableMethods(deps.db, admin.id);
  const enrollment = methods.length === 0;
  // The policy as read with the admin: a school that required a second factor meanwhile refuses
  // the password-only session at its insert (insertSession).
  if (enrollment && admin.school_mfa_policy !== 'required') return undefined;
  const mfaToken = generateMfaToken();
  const now = nowSeconds(deps.clock);
  await insertChallenge(deps.db, {
    token_hash: hashMfaToken(mfaToken),
    admin_id: admin.id,
    purpose: enrollment ? 'enroll' : 'login',
    credential_epoch: admin.credential_epoch,
    created_at: now,
    expires_at: now + MFA_TOKEN_LIFETIME,
    consumed_at: null,
    sso_issuer: federation?.issuer ?? null,
    sso_subject: federation?.subject ?? null,
    sso_session: federation?.idpSession ?? null,
  });
  return { mfaToken, methods, expiresIn: MFA_TOKEN_LIFETIME, enrollment };
}

/**
 * A live challenge issued for `purpose`, and its admin, or the one 401 for every dead, unknown or
 * misused mfa_token: a sign-in's token never enrolls, even once its admin has no factor left.
 * Every later use of the returned `ref` checks purpose and credential epoch again, in its statement.
 */
export async function openChallenge(deps: AppContext, mfaToken: string, purpose: ChallengePurpose) {
  const ref: ChallengeRef = { tokenHash: hashMfaToken(mfaToken), purpose };
  const challenge = await findLiveChallenge(deps.db, ref, nowSeconds(deps.clock));
  const admin = challenge === undefined ? undefined : await findAdminById(deps.db, challenge.admin_id);
  if (challenge === undefined || admin === undefined) throw new AppError('MFA_TOKEN_INVALID');
  return { ref, challenge, admin };
}

export type OpenedChallenge = Awaited<ReturnType<typeof openChallenge>>;
