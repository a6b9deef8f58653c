import { createHash } from 'node:crypto';
import { createRemoteJWKSet, customFetch, jwtVerify, type JWTPayload } from 'jose';
import { nowSeconds } from '../../runtime/clock.js';
import { inTransaction } from '../../db/database.js';
import { listSsoSettings } from '../../db/queries/sso-settings.js';
import { consumeLogoutToken } from '../../db/queries/sso-login-codes.js';
import type { RequestContext } from '../events.js';
import { endSessions } from '../sessions/end-sessions.js';
import type { AppContext } from '../context.js';
import { DOCUMENT_LIMIT, boundedFetch } from './bounded-fetch.js';
import { ASYMMETRIC, IDP_TIMEOUT_SECONDS, discoveredMetadata, issuerUsable } from './relying-party.js';

const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** A logout token older than this is refused (OpenID Connect Back-Channel Logout 1.0 §2.6: iat). */
const MAX_AGE = 300;
/** Seconds of clock difference allowed with the IdP, on `iat` and `exp` alike. */
const CLOCK_TOLERANCE = 60;
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

function keySetOf(jwksUri: string) {
  let keys = keySets.get(jwksUri);
  if (keys === undefined) keySets.set(jwksUri, (keys = createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: IDP_TIMEOUT_SECONDS * 1000, [customFetch]: boundedFetch(DOCUMENT_LIMIT) })));
  return keys;
}

function issuerOf(token: string): { iss?: unknown; aud?: unknown } {
  try {
    return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { iss?: unknown; aud?: unknown };
  } catch {
    return {};
  }
}

/** The claims §2.6 requires beyond the signature, iss, aud and iat that jwtVerify checks. */
function logoutClaimsValid(claims: JWTPayload): boolean {
  const events = claims.events as Record<string, unknown> | undefined;
  if (typeof events !== 'object' || events === null || typeof events[LOGOUT_EVENT] !== 'object') return false;
  if (claims.nonce !== undefined) return false;
  if (typeof claims.jti !== 'string' || claims.jti === '') return false;
  return typeof claims.sub === 'string' || typeof claims.sid === 'string';
}

/**
 * Whether the token is used for the first time (§2.6: a `jti` seen before is refused). It is
 * remembered until the last moment jwtVerify would still accept it: the earlier of its `exp` and
 * `iat` + MAX_AGE, plus the clock tolerance.
 */
function firstUse(db: AppContext['db'], issuer: string, claims: JWTPayload, now: number): Promise<boolean> {
  const acceptableUntil = Math.min(Number(claims.exp), Number(claims.iat) + MAX_AGE) + CLOCK_TOLERANCE;
  const jtiHash = createHash('sha256').update(String(claims.jti)).digest('base64url');
  return consumeLogoutToken(db, issuer, jtiHash, acceptableUntil, now);
}

/**
 * Ends the sessions a verified logout token names: of its `(iss, sub)`, or of its IdP session
 * `sid`. The token must come from a school's IdP, for that school's client, signed with the IdP's
 * published keys (asymmetric only). Returns false for any token that is not one (a 400).
 */
export async function backchannelLogout(deps: AppContext, token: string, context: RequestContext): Promise<boolean> {
  const unverified = issuerOf(token);
  if (typeof unverified.iss !== 'string') return false;
  const audiences = [unverified.aud].flat();
  // The school whose IdP and client the token names; verified below, this only picks the keys.
  const school = (await listSsoSettings(deps.db)).find((row) => row.issuer === unverified.iss && audiences.includes(row.client_id) && issuerUsable(deps, row.issuer));
  if (school === undefined) return false;
  const now = nowSeconds(deps.clock);
  try {
    const metadata = await discoveredMetadata(deps, school.issuer);
    if (metadata.jwks_uri === undefined) return false;
    const { payload } = await jwtVerify(token, keySetOf(metadata.jwks_uri), {
      issuer: school.issuer,
      audience: school.client_id,
      algorithms: ASYMMETRIC,
      currentDate: new Date(deps.clock.now()),
      maxTokenAge: MAX_AGE,
      clockTolerance: CLOCK_TOLERANCE,
      requiredClaims: ['iat', 'exp', 'jti'],
    });
    if (!logoutClaimsValid(payload)) return false;
    const who = { subject: payload.sub, idpSession: typeof payload.sid === 'string' ? payload.sid : undefined };
    const audit = { context, type: 'sso.logout', about: { schoolId: school.school_key }, always: true, detail: (count: number) => `${count} sessions ended` } as const;
    // The token is spent in the transaction that ends the sessions: a failure leaves it usable for the IdP's retry.
    return await inTransaction(deps.db, async (trx) => {
      if (!(await firstUse(trx, school.issuer, payload, now))) return false;
      await endSessions({ ...deps, db: trx }, { scope: { ssoIssuer: school.issuer, ...who }, reason: 'sso_logout', audit });
      return true;
    });
  } catch (error) {
    deps.logger.warn({ issuer: school.issuer, err: { name: (error as Error).name, code: (error as { code?: unknown }).code } }, 'sso: logout token refused');
    return false;
  }
}
