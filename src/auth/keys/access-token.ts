import { randomUUID } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify, errors as joseErrors } from 'jose';
import type { Clock } from '../../runtime/clock.js';
import { nowSeconds } from '../../runtime/clock.js';
import type { Config } from '../../config/config.js';
import { AppError } from '../../errors.js';
import { ACCESS_TOKEN_TYPE } from '../../verifier/access-token-type.js';
import { signJwt } from './jws.js';
import { PASSWORD_ONLY, type Acr, type Assurance } from './assurance.js';
import type { SigningKeys } from './signing-keys.js';
import { assertTokenLifetime } from '../../verifier/token-lifetime.js';


interface AccessTokenSubject {
  readonly adminId: string;
  readonly schoolId: string;
  readonly username: string;
  readonly sessionId: string;
  readonly assurance: Assurance;
}

export interface AccessTokenClaims {
  readonly sub: string;
  readonly school_id: string;
  readonly username: string;
  readonly sid: string;
  readonly iat: number;
  readonly exp: number;
  readonly jti: string;
  readonly acr: Acr;
  readonly amr: readonly string[];
}

type TokenConfig = Pick<Config, 'issuer' | 'audience' | 'accessTokenTtl'>;

/** Signs an RFC 9068 access token with the active key, on the signing thread (jws.ts). */
export async function issueAccessToken(
  keys: SigningKeys,
  config: TokenConfig,
  clock: Clock,
  subject: AccessTokenSubject,
): Promise<{ token: string; expiresIn: number }> {
  const signer = await keys.signer();
  const iat = nowSeconds(clock);
  const claims = {
    iss: config.issuer,
    aud: config.audience,
    sub: subject.adminId,
    school_id: subject.schoolId,
    username: subject.username,
    sid: subject.sessionId,
    iat,
    exp: iat + config.accessTokenTtl,
    jti: randomUUID(),
    acr: subject.assurance.acr,
    amr: [...subject.assurance.amr],
  };
  const token = await signJwt(signer, claims);
  return { token, expiresIn: config.accessTokenTtl };
}

/**
 * Verifies an access token: the algorithm is pinned to the one of the key named by `kid` (so
 * `alg: none` and HMAC-with-the-public-key are refused), and `typ`, `iss`, `aud` and `exp` must
 * match, and `exp - iat` may not exceed ACCESS_TOKEN_TTL. Any failure is the same 401 for the client.
 */
export async function verifyAccessToken(keys: SigningKeys, config: TokenConfig, clock: Clock, token: string): Promise<AccessTokenClaims> {
  try {
    const { kid } = decodeProtectedHeader(token);
    const key = kid === undefined ? undefined : await keys.verificationKey(kid);
    if (key === undefined) throw new AppError('INVALID_ACCESS_TOKEN');
    const { payload } = await jwtVerify(token, key.key, {
      algorithms: [key.alg],
      typ: ACCESS_TOKEN_TYPE,
      issuer: config.issuer,
      audience: config.audience,
      currentDate: new Date(clock.now()),
      requiredClaims: ['sub', 'sid', 'iat', 'exp', 'jti'],
    });
    if (typeof payload.sid !== 'string' || typeof payload.school_id !== 'string' || typeof payload.username !== 'string') {
      throw new AppError('INVALID_ACCESS_TOKEN');
    }
    // Whatever its `exp` says, no token lives longer than we issue them: a forgery made with a
    // leaked key is refused even before that key is revoked.
    assertTokenLifetime(payload, config.accessTokenTtl, nowSeconds(clock));
    // Tokens signed before assurance was recorded were all password-only.
    const acr = payload.acr === 'aal2' ? 'aal2' : PASSWORD_ONLY.acr;
    const amr = Array.isArray(payload.amr) ? payload.amr.filter((value): value is string => typeof value === 'string') : PASSWORD_ONLY.amr;
    return { ...(payload as unknown as AccessTokenClaims), acr, amr };
  } catch (error) {
    if (error instanceof AppError || error instanceof joseErrors.JOSEError || error instanceof TypeError) {
      throw new AppError('INVALID_ACCESS_TOKEN', { cause: error });
    }
    throw error;
  }
}
