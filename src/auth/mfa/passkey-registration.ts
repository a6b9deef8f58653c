import { randomUUID } from 'node:crypto';
import { generateRegistrationOptions, verifyRegistrationResponse, type RegistrationResponseJSON } from '@simplewebauthn/server';
import { nowSeconds } from '../../runtime/clock.js';
import type { AppContext } from '../context.js';
import { insertPasskey, saveRegistrationChallenge, takeRegistrationChallenge } from '../../db/queries/webauthn.js';
import { AppError } from '../../errors.js';
import type { RequestContext } from '../events.js';
import { finishEnrollment, type Confirmation } from './enrollment-finish.js';
import { PASSKEY_ALGORITHMS, PASSKEY_CHALLENGE_LIFETIME, PASSKEY_TIMEOUT_MS, passkeyAssurance, passkeyDescriptors, relyingParty, signedChallenge } from './passkey-party.js';
import { epochOf, requireFactorManager, type MfaPrincipal } from './principal.js';

/**
 * Creation options for a new passkey of the bearer's admin; the challenge is stored (one per
 * admin, replacing an earlier one) for PASSKEY_CHALLENGE_LIFETIME. The user handle is the
 * admin's id, never a name; the admin's passkeys are excluded so one key is not added twice.
 * The options ask for a discoverable credential and the `credProps` extension (simplewebauthn
 * adds it), whose answer says whether the passkey can sign in alone.
 */
export async function passkeyRegistrationOptions(deps: AppContext, principal: MfaPrincipal) {
  const party = relyingParty(deps.config);
  await requireFactorManager(deps, principal, true);
  const { admin } = principal;
  const options = await generateRegistrationOptions({
    rpName: party.rpName,
    rpID: party.rpId,
    userID: new TextEncoder().encode(admin.id),
    userName: `${admin.school_id}:${admin.username}`,
    userDisplayName: `${admin.username} (${admin.school_id})`,
    timeout: PASSKEY_TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: await passkeyDescriptors(deps.db, admin.id),
    // Discoverable, so it can also sign in alone; a school that requires passkey sign-in insists.
    authenticatorSelection: { residentKey: admin.school_passkey_policy === 'required' ? 'required' : 'preferred', userVerification: 'required' },
    supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
  });
  await saveRegistrationChallenge(deps.db, admin.id, options.challenge, nowSeconds(deps.clock) + PASSKEY_CHALLENGE_LIFETIME);
  return options;
}

/**
 * Verifies a new passkey (user verification required, origin and RP ID checked, the challenge
 * taken once) and stores it as a confirmed factor. A credential id already stored, for this
 * admin or another, is refused by the unique index rather than overwritten; so is the passkey of
 * an admin whose sessions an operator ended (reset, password, disable) after the bearer was checked.
 */
export async function registerPasskey(deps: AppContext, principal: MfaPrincipal, credential: unknown, name: string, context: RequestContext): Promise<Confirmation> {
  const party = relyingParty(deps.config);
  const { hasFactor } = await requireFactorManager(deps, principal, true);
  const { admin } = principal;
  const now = nowSeconds(deps.clock);
  const challenge = signedChallenge(credential);
  if (challenge === undefined || !(await takeRegistrationChallenge(deps.db, admin.id, challenge, now))) throw new AppError('PASSKEY_REGISTRATION_FAILED');
  const verification = await verifyRegistrationResponse({
    response: credential as RegistrationResponseJSON,
    expectedChallenge: challenge,
    expectedOrigin: [...party.origins],
    expectedRPID: party.rpId,
    requireUserVerification: true,
    supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
  }).catch(() => undefined);
  if (verification?.verified !== true) throw new AppError('PASSKEY_REGISTRATION_FAILED');
  const { credential: key, credentialDeviceType } = verification.registrationInfo;
  const factorId = randomUUID();
  const stored = await insertPasskey(deps.db, {
    id: factorId,
    admin_id: admin.id,
    name,
    created_at: now,
    credential_id: key.id,
    public_key: Buffer.from(key.publicKey).toString('base64url'),
    sign_count: key.counter,
    transports: (key.transports ?? []).join(','),
    device_type: credentialDeviceType,
    enrolled_ip: context.ip,
    discoverable: residentKeyOf(credential),
  }, epochOf(principal));
  if (!stored) throw new AppError('PASSKEY_REGISTRATION_FAILED');
  return finishEnrollment(deps, principal, { hasFactor, detail: `webauthn ${factorId}`, factorId, assurance: passkeyAssurance(credentialDeviceType) }, context);
}

/**
 * What the browser's `credProps` extension said: 1 a discoverable credential, 0 not, null when it
 * did not say. Not signed by the authenticator: it only informs `GET /admin/auth/mfa` and the
 * `required` policy, and a passkey that signs in alone is marked discoverable then.
 */
function residentKeyOf(credential: unknown): number | null {
  const results = (credential as { clientExtensionResults?: { credProps?: { rk?: unknown } } }).clientExtensionResults;
  const rk = results?.credProps?.rk;
  return typeof rk === 'boolean' ? Number(rk) : null;
}
