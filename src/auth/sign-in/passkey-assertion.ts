import { verifyAuthenticationResponse, type AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { AppContext } from '../context.js';
import type { AdminForLogin } from '../../db/queries/admins.js';
import type { MfaFactor } from '../../db/queries/mfa-factors.js';
import { transportsOf, signedChallenge } from '../mfa/passkey-party.js';
import { openPasskeyChallenge, schoolDigest, type PasskeyChallenge } from '../mfa/passkey-challenge.js';
import type { WebauthnConfig } from '../../config/webauthn.js';

/** What a sign-in assertion names before anything is verified: its credential, user handle and challenge. */
export interface PresentedAssertion {
  readonly credentialId: string;
  readonly userHandle: string;
  readonly challenge: string;
}

/** The assertion's claims, or undefined when it lacks one (every such answer is the one 401). */
export function presentedAssertion(credential: unknown): PresentedAssertion | undefined {
  const { id, response } = credential as { id?: unknown; response?: { userHandle?: unknown } };
  const challenge = signedChallenge(credential);
  const userHandle = response?.userHandle;
  if (typeof id !== 'string' || typeof userHandle !== 'string' || challenge === undefined) return undefined;
  return { credentialId: id, userHandle, challenge };
}

/**
 * Why an assertion for `admin`'s passkey `factor` does not sign in, or undefined when it does:
 * the user handle names the passkey's owner (WebAuthn §7.2 step 6), the challenge is one we
 * sealed, unexpired, for the owner's school if it named one, and the signature verifies with
 * the origin, RP ID, user verification and a counter that grew. Reasons go to the audit trail only.
 */
export async function assertionRefusal(
  deps: AppContext,
  party: WebauthnConfig,
  presented: PresentedAssertion,
  passkey: { readonly factor: MfaFactor; readonly admin: AdminForLogin },
  credential: unknown,
  now: number,
): Promise<{ readonly reason: string } | { readonly challenge: PasskeyChallenge; readonly newCounter: number }> {
  const { factor, admin } = passkey;
  if (Buffer.from(presented.userHandle, 'base64url').toString('utf8') !== admin.id) return { reason: 'passkey user_handle' };
  const challenge = await openPasskeyChallenge(deps, presented.challenge, now);
  if (challenge === undefined) return { reason: 'passkey challenge' };
  if (challenge.schoolDigest !== null && challenge.schoolDigest !== schoolDigest(admin.school_key)) return { reason: 'passkey other_school' };
  const counter = Number(factor.sign_count ?? 0);
  const verification = await verifyAuthenticationResponse({
    response: credential as AuthenticationResponseJSON,
    expectedChallenge: presented.challenge,
    expectedOrigin: [...party.origins],
    expectedRPID: party.rpId,
    requireUserVerification: true,
    credential: { id: presented.credentialId, publicKey: new Uint8Array(Buffer.from(factor.public_key ?? '', 'base64url')), counter, transports: transportsOf(factor) },
  }).catch(() => undefined);
  if (verification?.verified !== true) return { reason: 'passkey signature' };
  return { challenge, newCounter: verification.authenticationInfo.newCounter };
}
