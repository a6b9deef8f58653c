import * as oidc from 'openid-client';
import type { Claims } from './providers.js';

/**
 * The claims a sign-in is matched on, with the e-mail address where the IdP put it: in the ID
 * token, or only in its UserInfo answer for the same access token, as OpenID Connect Core §5.4
 * allows for the `email` scope (oidc-provider's default, and several districts' IdPs). The pair
 * `email`/`email_verified` comes from one source, never mixed. fetchUserInfo refuses an answer
 * whose `sub` is not the ID token's (§5.3.2); the answer is read with the relying party's byte
 * limit and time-out.
 */
export async function withEmailClaims(config: oidc.Configuration, accessToken: string, claims: Claims): Promise<Claims> {
  if (typeof claims.email === 'string') return claims;
  if (config.serverMetadata().userinfo_endpoint === undefined) return claims;
  const info = await oidc.fetchUserInfo(config, accessToken, String(claims.sub));
  return { ...claims, email: info.email, email_verified: info.email_verified };
}
