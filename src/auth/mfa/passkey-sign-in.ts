import { generateAuthenticationOptions, verifyAuthenticationResponse, type AuthenticationResponseJSON } from '@simplewebauthn/server';
import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import { saveSignInChallenge, takeSignInChallenge, type ChallengeRef } from '../../db/queries/mfa-challenges.js';
import { advanceSignCount, findCredential } from '../../db/queries/webauthn.js';
import { AppError } from '../../errors.js';
import type { Assurance } from '../keys/assurance.js';
import { PASSKEY_TIMEOUT_MS, passkeyAssurance, passkeyDescriptors, relyingParty, signedChallenge, transportsOf } from './passkey-party.js';
import { openChallenge } from './challenge.js';

/**
 * Request options for answering a sign-in (an mfa_token) with a passkey. The challenge is kept
 * on the mfa_token's row, replacing an earlier one, and lives no longer than the token.
 */
export async function passkeySignInOptions(deps: AppContext, mfaToken: string) {
  const party = relyingParty(deps.config);
  const { ref, admin } = await openChallenge(deps, mfaToken, 'login');
  const passkeys = await passkeyDescriptors(deps.db, admin.id);
  if (passkeys.length === 0) throw new AppError('MFA_NOT_ENROLLED');
  const options = await generateAuthenticationOptions({
    rpID: party.rpId,
    allowCredentials: passkeys,
    userVerification: 'required',
    timeout: PASSKEY_TIMEOUT_MS,
  });
  if (!(await saveSignInChallenge(deps.db, ref, options.challenge, nowSeconds(deps.clock)))) throw new AppError('MFA_TOKEN_INVALID');
  return options;
}

/**
 * Checks a passkey assertion for a sign-in: the challenge taken once from the mfa_token's row,
 * then origin, RP ID, user verification and signature, then the signature counter moved on by
 * one conditional update (a counter that does not grow means a cloned key, or a replay).
 * Undefined for anything wrong: the caller counts it as a failed second factor.
 */
export async function checkPasskey(deps: AppContext, adminId: string, ref: ChallengeRef, credential: unknown): Promise<Assurance | undefined> {
  const party = deps.config.webauthn;
  const credentialId = (credential as { id?: unknown }).id;
  const challenge = signedChallenge(credential);
  if (party === undefined || typeof credentialId !== 'string' || challenge === undefined) return undefined;
  const factor = await findCredential(deps.db, adminId, credentialId);
  const now = nowSeconds(deps.clock);
  if (factor === undefined || !(await takeSignInChallenge(deps.db, ref, challenge, now))) return undefined;
  const counter = Number(factor.sign_count ?? 0);
  const verification = await verifyAuthenticationResponse({
    response: credential as AuthenticationResponseJSON,
    expectedChallenge: challenge,
    expectedOrigin: [...party.origins],
    expectedRPID: party.rpId,
    requireUserVerification: true,
    credential: { id: credentialId, publicKey: new Uint8Array(Buffer.from(factor.public_key ?? '', 'base64url')), counter, transports: transportsOf(factor) },
  }).catch(() => undefined);
  if (verification?.verified !== true) return undefined;
  if (!(await advanceSignCount(deps.db, factor.id, counter, verification.authenticationInfo.newCounter, now))) return undefined;
  return passkeyAssurance(factor.device_type);
}
