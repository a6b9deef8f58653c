import { emailDomainOf, emailKey } from './email-address.js';

/**
 * What each kind of identity provider needs to say which district may sign in, and how its ID
 * token says it (docs/sso.md, "Settings"). A new protocol (SAML) would add a profile with its own flow; the
 * checks below are written against claims, not against OpenID Connect.
 */
export type ProviderName = 'google' | 'microsoft' | 'clever' | 'classlink' | 'oidc';

export const PROVIDERS: readonly ProviderName[] = ['google', 'microsoft', 'clever', 'classlink', 'oidc'];

/** The allowlist a school's settings hold. */
export interface Allowlist {
  readonly provider: ProviderName;
  readonly domains: readonly string[];
  readonly tenant: string | null;
  readonly district: string | null;
}

export type Claims = Readonly<Record<string, unknown>>;

/** Why an ID token is refused; the audit trail records it, the front end sees a generic error. */
type ClaimRefusal = 'domain' | 'tenant' | 'district' | 'email_missing';

interface Profile {
  /** The issuer, when the provider fixes it (else the operator gives --issuer). */
  readonly issuer?: (allowlist: Pick<Allowlist, 'tenant'>) => string;
  readonly scope: string;
  readonly needs: readonly ('domains' | 'tenant' | 'district' | 'issuer')[];
  readonly check: (claims: Claims, allowlist: Allowlist) => ClaimRefusal | undefined;
}

function emailDomain(claims: Claims): string | undefined {
  return typeof claims.email === 'string' ? emailDomainOf(claims.email) : undefined;
}

/** With --domains, the email's domain must be one of them; without, any email of the IdP. */
function checkEmailDomain(claims: Claims, allowlist: Allowlist): ClaimRefusal | undefined {
  if (allowlist.domains.length === 0) return undefined;
  const domain = emailDomain(claims);
  if (domain === undefined) return 'email_missing';
  return allowlist.domains.includes(domain) ? undefined : 'domain';
}

export const PROFILES: Readonly<Record<ProviderName, Profile>> = {
  // Google: `hd` is the Workspace domain; a consumer account has none and is refused.
  google: {
    issuer: () => 'https://accounts.google.com',
    scope: 'openid email profile',
    needs: ['domains'],
    check: (claims, allowlist) => (typeof claims.hd === 'string' && allowlist.domains.includes(emailKey(claims.hd)) ? undefined : 'domain'),
  },
  // Entra ID: the tenant's own issuer, and `tid` must be the tenant.
  microsoft: {
    issuer: ({ tenant }) => `https://login.microsoftonline.com/${tenant ?? ''}/v2.0`,
    scope: 'openid email profile',
    needs: ['tenant'],
    check: (claims, allowlist) => (claims.tid === allowlist.tenant ? checkEmailDomain(claims, allowlist) : 'tenant'),
  },
  clever: {
    issuer: () => 'https://clever.com',
    scope: 'openid email profile',
    needs: ['district'],
    check: (claims, allowlist) => (claims.district === allowlist.district ? undefined : 'district'),
  },
  classlink: { scope: 'openid email profile', needs: ['issuer'], check: checkEmailDomain },
  oidc: { scope: 'openid email profile', needs: ['issuer'], check: checkEmailDomain },
};

/** True when the ID token's `amr` reports a multi-factor sign-in (RFC 8176 `mfa`, or two factors). */
export function idpReportsMfa(claims: Claims): boolean {
  const amr = Array.isArray(claims.amr) ? claims.amr.filter((value): value is string => typeof value === 'string') : [];
  if (amr.includes('mfa')) return true;
  const second = ['otp', 'hwk', 'swk', 'sms', 'fido'];
  return amr.some((value) => second.includes(value)) && amr.some((value) => ['pwd', 'pin', 'fpt', 'face'].includes(value));
}
