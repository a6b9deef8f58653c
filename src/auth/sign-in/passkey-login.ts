import { generateAuthenticationOptions } from '@simplewebauthn/server';
import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import { findAdminById, type AdminForLogin } from '../../db/queries/admins.js';
import { acceptPasskeyChallenge, findPasskeyByCredentialId, markDiscoverable } from '../../db/queries/passkey-sign-in.js';
import { isPasswordLoginOff } from '../../db/queries/sso-settings.js';
import { advanceSignCount } from '../../db/queries/webauthn.js';
import { AppError } from '../../errors.js';
import { aboutAdmin, type RequestContext } from '../events.js';
import { canonicalKey } from '../identity.js';
import { PASSKEY_TIMEOUT_MS, passkeyAloneAssurance, relyingParty } from '../mfa/passkey-party.js';
import { hashPasskeyChallenge, issuePasskeyChallenge } from '../mfa/passkey-challenge.js';
import { startSession, type LoginResult } from '../sessions/session-start.js';
import { admitPasskeyAttempt, recordPasswordFailure } from '../throttling/login-attempt.js';
import { accountOf, type PasskeyCredential } from '../throttling/throttle-rules.js';
import { releasePasskeyAttempt, settlePasskeySuccess } from '../throttling/throttle.js';
import { assertionRefusal, presentedAssertion } from './passkey-assertion.js';

/**
 * Request options for signing in with a passkey alone: no credentials listed (the browser offers
 * the discoverable ones it holds for our RP ID), user verification required, and a sealed
 * challenge, so the request writes nothing and answers alike for every school id, known or not.
 */
export async function passkeyLoginOptions(deps: AppContext, schoolId: string | undefined) {
  const party = relyingParty(deps.config);
  const schoolKey = schoolId === undefined ? null : canonicalKey(schoolId);
  return generateAuthenticationOptions({
    rpID: party.rpId,
    allowCredentials: [],
    userVerification: 'required',
    timeout: PASSKEY_TIMEOUT_MS,
    challenge: await issuePasskeyChallenge(deps, schoolKey, nowSeconds(deps.clock)),
  });
}

/**
 * Signs an admin in with a passkey alone. The credential's user handle names the admin; every
 * refusal is the password login's one 401 and is counted by its throttle (the address, and the
 * credential at that address), so the answers tell nobody which credentials, admins or schools
 * exist. The session starts through login's own code, which decides in its insert whether the
 * admin, school, credential epoch and passkey policy still allow it.
 */
export async function passkeyLogin(deps: AppContext, credential: unknown, context: RequestContext): Promise<LoginResult> {
  const party = relyingParty(deps.config);
  const ip = context.ip ?? 'unknown';
  const presented = presentedAssertion(credential);
  const factor = presented === undefined ? undefined : await findPasskeyByCredentialId(deps.db, presented.credentialId);
  const admin = factor === undefined ? undefined : await findAdminById(deps.db, factor.admin_id);
  const owner: PasskeyCredential | undefined = factor === undefined || admin === undefined ? undefined : { id: factor.id, account: accountOf(admin.school_key, admin.username_key) };
  const who = admin === undefined ? { adminId: null } : aboutAdmin(admin);
  const reservation = await admitPasskeyAttempt(deps, owner, ip, context, who);
  const refuse = async (reason: string): Promise<never> => {
    await recordPasswordFailure(deps, reservation, context, who, reason);
    throw new AppError('LOGIN_REFUSED');
  };
  if (presented === undefined) return refuse('passkey malformed');
  if (factor === undefined || admin === undefined || owner === undefined) return refuse('passkey unknown_credential');
  const now = nowSeconds(deps.clock);
  const checked = await assertionRefusal(deps, party, presented, { factor, admin }, credential, now).catch(async (error: unknown) => {
    await releasePasskeyAttempt(deps, owner, ip).catch(() => undefined);
    throw error;
  });
  if ('reason' in checked) return refuse(checked.reason);
  const policy = await policyRefusal(deps, admin);
  if (policy !== undefined) return refuse(policy);
  // Used once, on every instance: the insert decides; then the counter moves on from the value
  // the signature was checked against, or a clone (or a replay in parallel) loses.
  if (!(await acceptPasskeyChallenge(deps.db, hashPasskeyChallenge(presented.challenge), checked.challenge.expiresAt))) return refuse('passkey challenge_used');
  if (!(await advanceSignCount(deps.db, factor.id, Number(factor.sign_count ?? 0), checked.newCounter, now))) return refuse('passkey counter');
  if (factor.discoverable !== 1) await markDiscoverable(deps.db, factor.id);
  await settlePasskeySuccess(deps, owner, ip);
  const client = { account: owner.account, ip };
  return startSession(deps, admin, client, context, passkeyAloneAssurance(factor.device_type)).catch(async (error: unknown) => {
    // Not a failure of the admin's: a session the database could not store (a full disk).
    if (!(error instanceof AppError)) await releasePasskeyAttempt(deps, undefined, ip).catch(() => undefined);
    throw error;
  });
}

/** Why the admin may not sign in with a passkey alone now, as read; the session's insert decides again. */
async function policyRefusal(deps: AppContext, admin: AdminForLogin): Promise<string | undefined> {
  if (admin.school_suspended_at !== null) return 'passkey school_suspended';
  if (admin.disabled_at !== null) return 'passkey admin_disabled';
  if (admin.school_passkey_policy === 'off') return 'passkey policy_off';
  // A school that signs in only through its IdP decided that every sign-in goes through it.
  if (await isPasswordLoginOff(deps.db, admin.school_key)) return 'passkey idp_only';
  return undefined;
}
