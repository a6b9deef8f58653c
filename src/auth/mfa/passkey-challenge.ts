import { createHash } from 'node:crypto';
import { browserStateKey } from '../keys/browser-state-key.js';
import { SEALED_PREFIX, openSealedText, sealText } from '../keys/sealed-text.js';
import type { AppContext } from '../context.js';
import { PASSKEY_CHALLENGE_LIFETIME } from './passkey-party.js';

const LABEL = 'school-auth passkey challenge';

/**
 * What a passkey sign-in's challenge carries, sealed (AES-256-GCM, a fresh random IV each time, so
 * every challenge is unpredictable and unique): when it expires, and the school it was asked for,
 * as a digest (a front end that named one accepts only that school's admins). The options request
 * writes nothing; the sign-in records the digest of the challenge it accepts, once.
 */
interface ChallengeState {
  /** The first 16 bytes of SHA-256 over the school key, base64url; null for any school. */
  readonly s: string | null;
  readonly e: number;
}

export interface PasskeyChallenge {
  readonly schoolDigest: string | null;
  readonly expiresAt: number;
}

export function schoolDigest(schoolKey: string): string {
  return createHash('sha256').update(schoolKey).digest().subarray(0, 16).toString('base64url');
}

/** A new sign-in challenge, as the bytes the browser signs. */
export async function issuePasskeyChallenge(deps: Pick<AppContext, 'db' | 'config'>, schoolKey: string | null, now: number): Promise<Uint8Array<ArrayBuffer>> {
  const state: ChallengeState = { s: schoolKey === null ? null : schoolDigest(schoolKey), e: now + PASSKEY_CHALLENGE_LIFETIME };
  const sealed = sealText(JSON.stringify(state), LABEL, await browserStateKey(deps));
  return Uint8Array.from(Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64url'));
}

/** The challenge's state, if it is one we sealed and it has not expired; undefined otherwise. */
export async function openPasskeyChallenge(deps: Pick<AppContext, 'db' | 'config'>, challenge: string, now: number): Promise<PasskeyChallenge | undefined> {
  const opened = openSealedText(SEALED_PREFIX + challenge, LABEL, await browserStateKey(deps));
  if (opened === undefined) return undefined;
  const state = JSON.parse(opened) as ChallengeState;
  return state.e > now ? { schoolDigest: state.s, expiresAt: state.e } : undefined;
}

/** The digest recorded when a challenge is accepted: the challenge itself is never stored. */
export function hashPasskeyChallenge(challenge: string): string {
  return createHash('sha256').update(challenge).digest('base64url');
}
