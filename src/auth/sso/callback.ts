import * as oidc from 'openid-client';
import { nowSeconds } from '../../runtime/clock.js';
import { countCallbackFailure, isCallbackThrottled } from '../../db/queries/sso-callback-failures.js';
import { consumeState } from '../../db/queries/sso-login-codes.js';
import { findSsoSettings } from '../../db/queries/sso-settings.js';
import { AppError } from '../../errors.js';
import { recordEvent, type RequestContext } from '../events.js';
import type { AppContext } from '../context.js';
import { matchIdentity } from './identity-match.js';
import { issueLoginCode } from './login-code.js';
import { idpReportsMfa, type Claims } from './providers.js';
import { ACCESS_DENIED, UNAVAILABLE, callbackUrl, frontEndRedirect } from './redirects.js';
import { IdpAnswerTooLargeError } from './bounded-fetch.js';
import { IdpUnavailableError, forgetDiscovery } from './discovery-cache.js';
import { relyingParty } from './relying-party.js';
import { withEmailClaims } from './userinfo-claims.js';
import { STATE_LIFETIME, hashState, openState, type SsoState } from './state.js';

/** Failed callbacks one client IP may cause per window before it gets 429s. */
export const CALLBACK_FAILURE_LIMIT = 20;
export const CALLBACK_FAILURE_WINDOW = 600;

/** How a callback ended, for the metric and the test of each check. */
type CallbackOutcome = 'success' | 'refused' | 'unavailable';

interface CallbackAnswer {
  readonly location: string;
  readonly outcome: CallbackOutcome;
}

/**
 * The IdP's redirect back: state opened and used once, code exchanged and the ID token checked
 * by openid-client, the identity matched to an admin; answers where to send the browser. An
 * unusable state is a 400 (there is nowhere safe to redirect to); an IdP that fails is
 * `temporarily_unavailable`; every refusal is `access_denied`, its reason in the audit trail.
 */
export async function finishSsoCallback(deps: AppContext, query: string, context: RequestContext): Promise<CallbackAnswer> {
  const now = nowSeconds(deps.clock);
  const ip = context.ip ?? 'unknown';
  if (await isCallbackThrottled(deps.db, ip, now, CALLBACK_FAILURE_WINDOW, CALLBACK_FAILURE_LIMIT)) throw new AppError('SSO_CALLBACK_THROTTLED');
  const rawState = new URLSearchParams(query).get('state') ?? '';
  const state = await openState(deps, rawState, now);
  if (state === undefined || !(await consumeState(deps.db, hashState(rawState), state.expiresAt))) {
    await countCallbackFailure(deps.db, ip, now, CALLBACK_FAILURE_WINDOW);
    await recordEvent(deps.db, deps.clock, context, { type: 'sso.failure', detail: state === undefined ? 'state_invalid' : 'state_reused' });
    throw new AppError('SSO_STATE_INVALID');
  }
  const result = await signInAtIdp(deps, state, rawState, query, context);
  if ('refusal' in result) {
    await countCallbackFailure(deps.db, ip, now, CALLBACK_FAILURE_WINDOW);
    await recordEvent(deps.db, deps.clock, context, { type: 'sso.failure', schoolId: state.schoolKey, ...result.who, detail: result.refusal });
    const outcome = result.refusal === 'idp_unavailable' ? 'unavailable' : 'refused';
    return { location: frontEndRedirect(state.redirectUri, outcome === 'unavailable' ? UNAVAILABLE : ACCESS_DENIED), outcome };
  }
  return { location: frontEndRedirect(state.redirectUri, { code: result.code }), outcome: 'success' };
}

type SignInResult = { code: string } | { refusal: string; who?: { adminId?: string; username?: string } };

async function signInAtIdp(deps: AppContext, state: SsoState, rawState: string, query: string, context: RequestContext): Promise<SignInResult> {
  const settings = await findSsoSettings(deps.db, state.schoolKey);
  if (settings === undefined) return { refusal: 'sso_removed' };
  const claims = await verifiedClaims(deps, settings, state, rawState, query);
  if (typeof claims === 'string') return { refusal: claims };
  const match = await matchIdentity(deps, settings, claims, context);
  if ('refusal' in match) return { refusal: match.refusal, who: { username: typeof claims.email === 'string' ? claims.email : String(claims.sub) } };
  const code = await issueLoginCode(deps, {
    admin: match.admin,
    codeChallenge: state.codeChallenge,
    idpMfa: settings.trust_idp_mfa === 1 && idpReportsMfa(claims),
    issuer: String(claims.iss),
    subject: String(claims.sub),
    idpSession: typeof claims.sid === 'string' ? claims.sid : null,
  });
  return { code };
}

/** The ID token's claims once openid-client has checked the response, or why not. */
async function verifiedClaims(deps: AppContext, settings: Parameters<typeof relyingParty>[1], state: SsoState, rawState: string, query: string): Promise<Claims | string> {
  try {
    const { config, done } = await relyingParty(deps, settings);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(`${callbackUrl(deps.config)}?${query}`), {
      pkceCodeVerifier: state.verifier,
      expectedState: rawState,
      expectedNonce: state.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (claims === undefined) return 'id_token_missing';
    if (!issuedJustNow(claims.iat, nowSeconds(deps.clock))) return 'iat';
    const matched = await withEmailClaims(config, tokens.access_token, claims);
    done();
    return matched;
  } catch (error) {
    return refusalOf(deps, settings.issuer, error);
  }
}

/** A time-out, a network failure, a 5xx or an answer over its byte limit: the IdP's trouble, not a verdict on the user. */
function isIdpFailure(error: unknown): boolean {
  if (error instanceof IdpAnswerTooLargeError) return true;
  if (error instanceof Response) return error.status >= 500;
  if (error instanceof oidc.ResponseBodyError) return error.status >= 500;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return code === 'OAUTH_TIMEOUT' || ['TimeoutError', 'AbortError'].includes(error.name) || (error instanceof TypeError && /fetch failed/i.test(error.message));
}

/**
 * The ID token was issued for this sign-in: within the state's lifetime before now, and not in
 * the future beyond a minute of clock skew. openid-client only checks that `iat` is a number.
 */
function issuedJustNow(iat: number, now: number): boolean {
  return iat > now - STATE_LIFETIME && iat <= now + 60;
}

/** An IdP that cannot be reached, times out or answers 5xx is unavailable; anything else is a refusal. */
function refusalOf(deps: AppContext, issuer: string, error: unknown): string {
  if (error instanceof oidc.AuthorizationResponseError) return `idp_error ${error.error}`;
  const unavailable = error instanceof IdpUnavailableError || isIdpFailure(error) || isIdpFailure((error as { cause?: unknown }).cause);
  const cause = (error as { cause?: unknown }).cause;
  const tooLarge = [error, cause].find((candidate) => candidate instanceof IdpAnswerTooLargeError);
  deps.logger.warn({ issuer, err: { name: (error as Error).name, code: (error as { code?: unknown }).code, message: tooLarge?.message } }, 'sso: callback refused');
  const code = (error as { code?: unknown }).code;
  if (!unavailable) return `id_token_rejected ${typeof code === 'string' ? code : (error as Error).name}`;
  forgetDiscovery(deps, issuer);
  return 'idp_unavailable';
}
