import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import { consumeChallenge, takeChallengeGuess } from '../../db/queries/mfa-challenges.js';
import { AppError } from '../../errors.js';
import { aboutAdmin, recordEvent, type RequestContext } from '../events.js';
import { startSession, type Federation, type LoginResult } from '../sessions/session-start.js';
import { accountOf } from '../throttling/throttle-rules.js';
import { PASSWORD_AND_RECOVERY_CODE, type Assurance } from '../keys/assurance.js';
import { checkSecondFactor, type SecondFactorProof } from './factor-check.js';
import { openChallenge, type OpenedChallenge } from './challenge.js';
import { throttledSecondFactor } from './second-factor-throttle.js';

type SecondFactorAnswer = SecondFactorProof & { readonly mfaToken: string };

/**
 * Completes a sign-in with its second factor. Both limits are taken before the code is checked,
 * each by one conditional update, so parallel guesses cannot exceed them: the mfa_token's 5
 * guesses and the admin's throttle (10 in 15 minutes, lock at 100 in a row). The session starts
 * through login's own code, at the credential epoch the password was checked at.
 */
export async function verifySecondFactor(deps: AppContext, answer: SecondFactorAnswer, context: RequestContext): Promise<LoginResult> {
  const opened = await openChallenge(deps, answer.mfaToken, 'login');
  const { ref, challenge, admin } = opened;
  // The token's guess first: a dead or spent mfa_token (a lost race, a double submit) is refused
  // before it can count against the admin's throttle.
  if (!(await takeChallengeGuess(deps.db, ref, nowSeconds(deps.clock)))) throw new AppError('MFA_TOKEN_INVALID');
  const check = () => checkSecondFactor(deps, admin.id, { ref, credentialEpoch: challenge.credential_epoch }, answer);
  const assurance = await throttledSecondFactor(deps, admin, context, `wrong ${answer.method}`, check);
  return completeSignIn(deps, opened, assurance, context);
}

/**
 * The second factor was right: ends the challenge (of two right answers in parallel, one wins)
 * and starts the session. The caller gave back the throttle reservation, if it took one.
 */
export async function completeSignIn(
  deps: AppContext,
  opened: OpenedChallenge,
  assurance: Assurance,
  context: RequestContext,
): Promise<LoginResult> {
  const { ref, challenge, admin } = opened;
  if (!(await consumeChallenge(deps.db, ref, nowSeconds(deps.clock)))) throw new AppError('MFA_TOKEN_INVALID');
  await recordEvent(deps.db, deps.clock, context, { type: 'mfa.success', ...aboutAdmin(admin), detail: assurance.amr.join(' ') });
  // A recovery code stands in for a lost factor: its owner is told (NIST SP 800-63B-4 §4.2).
  if (assurance === PASSWORD_AND_RECOVERY_CODE) await recordEvent(deps.db, deps.clock, context, { type: 'mfa.recovery_code_used', ...aboutAdmin(admin) });
  // startSession settles the login throttle for this account and address, as a login does.
  const client = { account: accountOf(admin.school_key, admin.username_key), ip: context.ip ?? 'unknown' };
  const federation = federationOf(challenge);
  // After an IdP's sign-in the first factor is the federation (`fed`), not a password.
  const signedIn = federation === undefined ? assurance : { ...assurance, amr: ['fed', ...assurance.amr.filter((value) => value !== 'pwd')] };
  return startSession(deps, { ...admin, credential_epoch: challenge.credential_epoch }, client, context, signedIn, federation);
}

function federationOf(challenge: { sso_issuer: string | null; sso_subject: string | null; sso_session: string | null }): Federation | undefined {
  if (challenge.sso_issuer === null || challenge.sso_subject === null) return undefined;
  return { issuer: challenge.sso_issuer, subject: challenge.sso_subject, idpSession: challenge.sso_session };
}
