import { createHash, timingSafeEqual } from 'node:crypto';
import { secureRandomBytes } from '../secure-random.js';
import { nowSeconds } from '../../runtime/clock.js';
import type { AdminForLogin } from '../../db/queries/admins.js';
import { insertLoginCode, spendLoginCode, type SsoLoginCode } from '../../db/queries/sso-login-codes.js';
import { AppError } from '../../errors.js';
import type { AppContext } from '../context.js';

/** Seconds a login code lives: the front end exchanges it as soon as the page loads. */
const LOGIN_CODE_LIFETIME = 60;

function hashCode(code: string): string {
  return createHash('sha256').update(code).digest('base64url');
}

interface CodeGrant {
  readonly admin: AdminForLogin;
  readonly codeChallenge: string;
  readonly idpMfa: boolean;
  readonly issuer: string;
  readonly subject: string;
  readonly idpSession: string | null;
}

/** A fresh login code (256 bits), stored as its digest, bound to the front end's code_challenge. */
export async function issueLoginCode(deps: Pick<AppContext, 'db' | 'clock'>, grant: CodeGrant): Promise<string> {
  const code = secureRandomBytes(32).toString('base64url');
  await insertLoginCode(deps.db, {
    code_hash: hashCode(code),
    admin_id: grant.admin.id,
    code_challenge: grant.codeChallenge,
    credential_epoch: grant.admin.credential_epoch,
    idp_mfa: grant.idpMfa ? 1 : 0,
    issuer: grant.issuer,
    subject: grant.subject,
    idp_session: grant.idpSession,
    expires_at: nowSeconds(deps.clock) + LOGIN_CODE_LIFETIME,
    used_at: null,
  });
  return code;
}

/** S256 of the verifier equals the stored challenge (RFC 7636 §4.6), compared in constant time. */
function verifierMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

/**
 * Spends a login code: live, unused, and its challenge matching the verifier. The code is spent
 * before the verifier is compared, so a guessed verifier costs the code; every refusal is the same 401.
 */
export async function redeemLoginCode(deps: Pick<AppContext, 'db' | 'clock'>, code: string, verifier: string): Promise<SsoLoginCode> {
  const spent = await spendLoginCode(deps.db, hashCode(code), nowSeconds(deps.clock));
  if (spent === undefined || !verifierMatches(verifier, spent.code_challenge)) throw new AppError('SSO_CODE_INVALID');
  return spent;
}
