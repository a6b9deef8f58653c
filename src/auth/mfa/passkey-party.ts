import { decodeClientDataJSON } from '@simplewebauthn/server/helpers';
import type { Config } from '../../config/config.js';
import type { Db } from '../../db/database.js';
import { listFactors, type MfaFactor } from '../../db/queries/mfa-factors.js';
import type { WebauthnConfig } from '../../config/webauthn.js';
import { AppError } from '../../errors.js';
import type { Assurance } from '../keys/assurance.js';
import { MFA_TOKEN_LIFETIME } from './mfa-token.js';

/** ES256, EdDSA, RS256 (COSE ids): what passkeys and security keys offer, as the JWKS does. */
export const PASSKEY_ALGORITHMS = [-7, -8, -257];

/** How long a browser may take, and how long the challenge is accepted: the mfa_token's life. */
export const PASSKEY_CHALLENGE_LIFETIME = MFA_TOKEN_LIFETIME;
export const PASSKEY_TIMEOUT_MS = PASSKEY_CHALLENGE_LIFETIME * 1000;

/** The relying party, or 404 on a server whose operator did not set WEBAUTHN_RP_ID. */
export function relyingParty(config: Config): WebauthnConfig {
  if (config.webauthn === undefined) throw new AppError('PASSKEYS_OFF');
  return config.webauthn;
}

/** The challenges we hand out are base64url (simplewebauthn's 32 random bytes). */
const CHALLENGE = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * The challenge a browser signed, read from the credential's clientDataJSON so it can be taken
 * from the database (once) before the signature is checked; undefined when unreadable. It was
 * encoded inside the body, past the HTTP boundary's text guard: only the shape of a challenge we
 * issued may reach a query (a NUL would make PostgreSQL fail where SQLite finds nothing).
 */
export function signedChallenge(credential: unknown): string | undefined {
  const response = (credential as { response?: { clientDataJSON?: unknown } }).response;
  if (typeof response?.clientDataJSON !== 'string') return undefined;
  try {
    const { challenge } = decodeClientDataJSON(response.clientDataJSON);
    return typeof challenge === 'string' && CHALLENGE.test(challenge) ? challenge : undefined;
  } catch {
    return undefined;
  }
}

/**
 * RFC 8176: a key bound to one authenticator is hardware-held (`hwk`); a synced passkey lives in
 * a cloud keychain, so it counts as a software-held key (`swk`). Either is AAL2 with the password.
 */
export function passkeyAssurance(deviceType: string | null): Assurance {
  return { acr: 'aal2', amr: ['pwd', keyHeld(deviceType), 'mfa'] };
}

/**
 * A passkey alone, with user verification: the key is had, the PIN or biometric the authenticator
 * checked is the other factor (RFC 8176 `user`: the user was verified at the device), AAL2 by
 * itself (NIST SP 800-63B-4). No `pwd`: no password was presented.
 */
export function passkeyAloneAssurance(deviceType: string | null): Assurance {
  return { acr: 'aal2', amr: [keyHeld(deviceType), 'user', 'mfa'] };
}

function keyHeld(deviceType: string | null): 'swk' | 'hwk' {
  return deviceType === 'multiDevice' ? 'swk' : 'hwk';
}

/** The browser hints stored with a passkey, as the options want them back. */
export function transportsOf(factor: Pick<MfaFactor, 'transports'>) {
  const stored = factor.transports ?? '';
  return stored === '' ? [] : (stored.split(',') as ('usb' | 'nfc' | 'ble' | 'internal' | 'hybrid' | 'cable' | 'smart-card')[]);
}

/** An admin's passkeys as the options list them (to exclude at registration, to allow at sign-in). */
export async function passkeyDescriptors(db: Db, adminId: string) {
  const factors = await listFactors(db, adminId);
  return factors.filter((factor) => factor.type === 'webauthn').map((factor) => ({ id: factor.credential_id ?? '', transports: transportsOf(factor) }));
}
