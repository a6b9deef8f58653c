import * as oidc from 'openid-client';
import { isLoopbackUrlHost } from '../../config/sso.js';
import type { SsoSettingsRow } from '../../db/queries/sso-settings.js';
import type { AppContext } from '../context.js';
import { DOCUMENT_LIMIT, TOKEN_ANSWER_LIMIT, boundedFetch } from './bounded-fetch.js';
import { CONFIRMED_UP_MS, discover } from './discovery-cache.js';
import { openClientSecret } from './client-secret.js';

/** Seconds every call to an IdP may take: past it, the sign-in answers `temporarily_unavailable`. */
export const IDP_TIMEOUT_SECONDS = 5;
/** Signature algorithms an ID token may use: asymmetric only, so neither `none` nor an HMAC keyed with the client secret passes. */
export const ASYMMETRIC = ['RS256', 'PS256', 'ES256', 'EdDSA', 'RS384', 'RS512', 'PS384', 'PS512', 'ES384', 'ES512'];

type Deps = Pick<AppContext, 'db' | 'config' | 'clock'>;

function insecureAllowed(deps: Deps, issuer: string): boolean {
  const url = new URL(issuer);
  return url.protocol === 'http:' && isLoopbackUrlHost(url.hostname) && deps.config.sso.allowHttpLoopback;
}

/** Runs openid-client's checks against the injected clock, not the machine's. */
function clockSkew(deps: Deps): number {
  return Math.round((deps.clock.now() - Date.now()) / 1000);
}

function discoveredFor(deps: Deps, issuer: string, maxAgeMs?: number) {
  return discover(deps, issuer, { insecure: insecureAllowed(deps, issuer), timeout: IDP_TIMEOUT_SECONDS, maxAgeMs });
}

function idTokenAlg(server: oidc.ServerMetadata): string {
  const supported = server.id_token_signing_alg_values_supported ?? ['RS256'];
  return ASYMMETRIC.find((alg) => supported.includes(alg)) ?? 'RS256';
}

function clientAuth(server: oidc.ServerMetadata, secret: string): oidc.ClientAuth {
  const methods = server.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
  return methods.includes('client_secret_basic') ? oidc.ClientSecretBasic(secret) : oidc.ClientSecretPost(secret);
}

/** The key set may be as large as a discovery document; token and UserInfo answers are smaller. */
function idpFetch(server: oidc.ServerMetadata) {
  const documents = boundedFetch(DOCUMENT_LIMIT);
  const answers = boundedFetch(TOKEN_ANSWER_LIMIT);
  return (url: string, options: RequestInit) => (url === server.jwks_uri ? documents(url, options) : answers(url, options));
}

/**
 * The relying party of one school: openid-client configured with the school's client, the IdP's
 * cached discovery and keys (openid-client fetches the JWKS again when an unknown `kid` shows up,
 * so the IdP's key rotation is followed), a time-out and a byte limit on every call, and the
 * injected clock. The ID token's signature is verified with the IdP's published keys
 * (enableNonRepudiationChecks): without it openid-client trusts the token endpoint's TLS alone.
 */
export async function relyingParty(deps: Deps, settings: SsoSettingsRow, options: { confirmUp?: boolean } = {}): Promise<{ config: oidc.Configuration; done: () => void }> {
  const discovered = await discoveredFor(deps, settings.issuer, options.confirmUp === true ? CONFIRMED_UP_MS : undefined);
  const secret = openClientSecret(settings.client_secret, settings.school_key, deps.config.keyEncryption);
  const metadata = { client_secret: secret, id_token_signed_response_alg: idTokenAlg(discovered.server), [oidc.clockSkew]: clockSkew(deps) };
  const config = new oidc.Configuration(discovered.server, settings.client_id, metadata, clientAuth(discovered.server, secret));
  config.timeout = IDP_TIMEOUT_SECONDS;
  config[oidc.customFetch] = idpFetch(discovered.server);
  oidc.enableNonRepudiationChecks(config);
  if (insecureAllowed(deps, settings.issuer)) oidc.allowInsecureRequests(config);
  if (discovered.jwks !== undefined) oidc.setJwksCache(config, discovered.jwks);
  return {
    config,
    done: () => {
      discovered.jwks = oidc.getJwksCache(config) ?? discovered.jwks;
    },
  };
}

/** The IdP's discovered metadata (cached as for sign-ins), for what openid-client does not cover. */
export async function discoveredMetadata(deps: Deps, issuer: string): Promise<oidc.ServerMetadata> {
  return (await discoveredFor(deps, issuer)).server;
}

/** Whether an issuer can be used at all: https, or http on loopback with SSO_ALLOW_HTTP_LOOPBACK=on. */
export function issuerUsable(deps: Deps, issuer: string): boolean {
  return issuer.startsWith('https://') || insecureAllowed(deps, issuer);
}
