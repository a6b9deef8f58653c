import * as oidc from 'openid-client';
import { nowSeconds } from '../../runtime/clock.js';
import { findSsoSettings } from '../../db/queries/sso-settings.js';
import { AppError } from '../../errors.js';
import type { AppContext } from '../context.js';
import { canonicalKey } from '../identity.js';
import { PROFILES } from './providers.js';
import { IdpUnavailableError } from './discovery-cache.js';
import { issuerUsable, relyingParty } from './relying-party.js';
import { STATE_LIFETIME, sealState } from './state.js';
import { UNAVAILABLE, callbackUrl, frontEndRedirect } from './redirects.js';

const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

interface StartRequest {
  readonly schoolId: string;
  readonly redirectUri: string | undefined;
  readonly codeChallenge: string | undefined;
  readonly codeChallengeMethod: string | undefined;
}

/**
 * Begins a sign-in at the school's IdP and returns where to send the browser. Writes nothing:
 * the nonce, our PKCE verifier, the front end's challenge and where to return travel sealed in
 * `state`. The IdP's discovery document is fetched again when it last answered over a minute ago,
 * so a browser is not sent to an IdP known to be down. The redirect_uri is checked first, as an exact string, so nothing else can turn this
 * endpoint into an open redirect; then the rest, so a bad request says nothing about schools.
 */
export async function startSso(deps: AppContext, request: StartRequest): Promise<string> {
  const { redirectUri, codeChallenge } = request;
  if (redirectUri === undefined || !deps.config.sso.redirectUris.includes(redirectUri)) throw new AppError('SSO_REDIRECT_URI_INVALID');
  if (codeChallenge === undefined || !S256_CHALLENGE.test(codeChallenge)) throw new AppError('SSO_CODE_CHALLENGE_INVALID');
  if (request.codeChallengeMethod !== undefined && request.codeChallengeMethod !== 'S256') throw new AppError('SSO_CODE_CHALLENGE_INVALID');
  const schoolKey = canonicalKey(request.schoolId);
  const settings = schoolKey.includes('\0') ? undefined : await findSsoSettings(deps.db, schoolKey);
  if (settings === undefined) throw new AppError('SSO_NOT_SET_UP');
  try {
    if (!issuerUsable(deps, settings.issuer)) throw new IdpUnavailableError(new Error(`issuer ${settings.issuer} is not https`));
    const { config } = await relyingParty(deps, settings, { confirmUp: true });
    const nonce = oidc.randomNonce();
    const verifier = oidc.randomPKCECodeVerifier();
    const expiresAt = nowSeconds(deps.clock) + STATE_LIFETIME;
    const state = await sealState(deps, { schoolKey, redirectUri, nonce, verifier, codeChallenge, expiresAt });
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: callbackUrl(deps.config),
      scope: PROFILES[settings.provider as keyof typeof PROFILES].scope,
      response_type: 'code',
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    return url.href;
  } catch (error) {
    if (!(error instanceof IdpUnavailableError)) throw error;
    deps.logger.warn({ school: schoolKey, err: { message: String((error.cause as Error | undefined)?.message ?? error.message) } }, 'sso: identity provider unavailable at start');
    return frontEndRedirect(redirectUri, UNAVAILABLE);
  }
}
