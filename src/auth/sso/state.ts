import { createHash } from 'node:crypto';
import { browserStateKey } from '../keys/browser-state-key.js';
import type { AppContext } from '../context.js';
import { SEALED_PREFIX, openSealedText, sealText } from '../keys/sealed-text.js';

/** What the callback needs, carried by the browser sealed: `start` writes nothing. */
export interface SsoState {
  readonly schoolKey: string;
  readonly redirectUri: string;
  readonly nonce: string;
  /** PKCE verifier of our request to the IdP. */
  readonly verifier: string;
  /** The front end's S256 challenge, bound to the login code. */
  readonly codeChallenge: string;
  readonly expiresAt: number;
}

/** Seconds between start and callback: time to sign in at the IdP, MFA included. */
export const STATE_LIFETIME = 600;
const LABEL = 'school-auth sso state';

export async function sealState(deps: Pick<AppContext, 'db' | 'config'>, state: SsoState): Promise<string> {
  const sealed = sealText(JSON.stringify(state), LABEL, await browserStateKey(deps));
  return sealed.slice(SEALED_PREFIX.length);
}

/** The state, if it opens, is well formed and has not expired; undefined otherwise. */
export async function openState(deps: Pick<AppContext, 'db' | 'config'>, raw: string, now: number): Promise<SsoState | undefined> {
  if (raw.length === 0 || raw.length > 4096 || !/^[A-Za-z0-9_-]+$/.test(raw)) return undefined;
  const opened = openSealedText(SEALED_PREFIX + raw, LABEL, await browserStateKey(deps));
  if (opened === undefined) return undefined;
  const state = JSON.parse(opened) as SsoState;
  return state.expiresAt > now ? state : undefined;
}

/** The digest recorded when a state is used: the state itself is never stored. */
export function hashState(raw: string): string {
  return createHash('sha256').update(raw).digest('base64url');
}
