import { nowSeconds } from '../../runtime/clock.js';
import { inTransaction } from '../../db/database.js';
import { isLoopbackUrlHost } from '../../config/sso.js';
import { deleteSsoSettings, findSsoSettings, upsertSsoSettings, type SsoSettingsRow } from '../../db/queries/sso-settings.js';
import { UsageError } from '../../errors.js';
import { CLI_CONTEXT } from '../events.js';
import { endSessions } from '../sessions/end-sessions.js';
import type { AppContext } from '../context.js';
import { requireSchool } from '../accounts/schools.js';
import { sealClientSecret } from './client-secret.js';
import { PROFILES, PROVIDERS, type Allowlist, type ProviderName } from './providers.js';

export interface SsoOptions {
  readonly provider: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly issuer?: string;
  readonly domains?: string;
  readonly tenant?: string;
  readonly district?: string;
  readonly passwordLogin?: string;
  readonly trustIdpMfa?: boolean;
}

const DOMAIN = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/;
const TENANT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function providerOf(name: string): ProviderName {
  const provider = PROVIDERS.find((candidate) => candidate === name);
  if (provider === undefined) throw new UsageError(`--provider: expected one of ${PROVIDERS.join(', ')}`);
  return provider;
}

function domainsOf(raw: string | undefined): string[] {
  const domains = (raw ?? '').split(',').map((entry) => entry.trim().toLowerCase()).filter((entry) => entry !== '');
  const bad = domains.find((domain) => !DOMAIN.test(domain));
  if (bad !== undefined) throw new UsageError(`--domains: ${JSON.stringify(bad)} is not a domain name such as district.example`);
  return domains;
}

/** The IdP's discovery document is fetched over https; plain http only for a loopback test IdP. */
function checkIssuer(issuer: string): string {
  if (!URL.canParse(issuer)) throw new UsageError(`--issuer: ${JSON.stringify(issuer)} is not an absolute URL`);
  const url = new URL(issuer);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackUrlHost(url.hostname))) {
    throw new UsageError('--issuer: expected an https URL (http only for a loopback issuer, with SSO_ALLOW_HTTP_LOOPBACK=on)');
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '') throw new UsageError('--issuer: no query, fragment or userinfo');
  return issuer.replace(/\/+$/, '');
}

function passwordLoginOf(raw: string | undefined): number {
  if (raw === undefined || raw === 'on') return 1;
  if (raw === 'off') return 0;
  throw new UsageError('--password-login: expected on or off');
}

function allowlistOf(provider: ProviderName, options: SsoOptions): Allowlist {
  const allowlist = { provider, domains: domainsOf(options.domains), tenant: options.tenant?.toLowerCase() ?? null, district: options.district ?? null };
  const needs = PROFILES[provider].needs;
  if (needs.includes('domains') && allowlist.domains.length === 0) throw new UsageError(`--domains is required for ${provider}: the Workspace domains whose accounts may sign in`);
  if (needs.includes('tenant') && (allowlist.tenant === null || !TENANT.test(allowlist.tenant))) throw new UsageError('--tenant is required for microsoft: the directory (tenant) id, a GUID');
  if (needs.includes('district') && (allowlist.district === null || allowlist.district === '')) throw new UsageError('--district is required for clever: the Clever district id');
  return allowlist;
}

/**
 * Sets (or replaces) a school's identity provider; the secret is sealed before it is stored. The
 * school's sessions signed in through any other issuer end in the same transaction.
 */
export async function setSso(deps: Pick<AppContext, 'db' | 'clock' | 'config'>, schoolId: string, options: SsoOptions): Promise<SsoSettingsRow> {
  const school = await requireSchool(deps.db, schoolId);
  const provider = providerOf(options.provider);
  const allowlist = allowlistOf(provider, options);
  if (options.clientId.trim() === '' || options.clientId.length > 512) throw new UsageError('--client-id: required, at most 512 characters');
  if (options.clientSecret === '' || options.clientSecret.length > 4096) throw new UsageError('the client secret (standard input) is empty or longer than 4096 characters');
  const fixed = PROFILES[provider].issuer?.(allowlist);
  const issuer = options.issuer === undefined ? fixed : checkIssuer(options.issuer);
  if (issuer === undefined) throw new UsageError(`--issuer is required for ${provider}: the IdP's issuer URL`);
  const row: SsoSettingsRow = {
    school_key: school.key,
    provider,
    issuer,
    client_id: options.clientId.trim(),
    client_secret: sealClientSecret(options.clientSecret, school.key, deps.config.keyEncryption),
    domains: allowlist.domains.length === 0 ? null : allowlist.domains.join(' '),
    tenant: allowlist.tenant,
    district: allowlist.district,
    password_login: passwordLoginOf(options.passwordLogin),
    trust_idp_mfa: options.trustIdpMfa === true ? 1 : 0,
    updated_at: nowSeconds(deps.clock),
  };
  await inTransaction(deps.db, async (trx) => {
    const previous = await findSsoSettings(trx, school.key);
    await upsertSsoSettings(trx, row);
    const replaced = previous === undefined || previous.issuer === issuer ? undefined : previous.issuer;
    const detail = (count: number) => `${provider} ${issuer}${replaced === undefined ? '' : `; replaces ${replaced}, ${count} sessions ended`}`;
    const audit = { context: CLI_CONTEXT, type: 'sso.configured', about: { schoolId: school.key }, always: true, detail } as const;
    await endSessions({ ...deps, db: trx }, { scope: { ssoOfSchool: school.key, exceptIssuer: issuer }, reason: 'sso_replaced', audit });
  });
  return row;
}

/** A school's settings for display: the client secret is never part of it. */
export async function describeSso(deps: Pick<AppContext, 'db'>, schoolId: string) {
  const school = await requireSchool(deps.db, schoolId);
  const row = await findSsoSettings(deps.db, school.key);
  if (row === undefined) throw new UsageError(`school ${JSON.stringify(school.school_id)} has no single sign-on; set it with: school-auth sso set ${school.school_id} --provider ...`);
  return {
    school_id: school.school_id,
    provider: row.provider,
    issuer: row.issuer,
    client_id: row.client_id,
    client_secret: '(set, not shown)',
    domains: row.domains?.split(' ') ?? [],
    tenant: row.tenant,
    district: row.district,
    password_login: row.password_login === 1 ? 'on' : 'off',
    trust_idp_mfa: row.trust_idp_mfa === 1,
  };
}

/** Removes a school's identity provider and ends, in the same transaction, every session signed in through it. */
export async function removeSso(deps: Pick<AppContext, 'db' | 'clock'>, schoolId: string): Promise<void> {
  const school = await requireSchool(deps.db, schoolId);
  await inTransaction(deps.db, async (trx) => {
    const issuer = await deleteSsoSettings(trx, school.key);
    if (issuer === undefined) throw new UsageError(`school ${JSON.stringify(school.school_id)} has no single sign-on`);
    const audit = { context: CLI_CONTEXT, type: 'sso.removed', about: { schoolId: school.key }, always: true, detail: (count: number) => `${issuer}; ${count} sessions ended` } as const;
    await endSessions({ ...deps, db: trx }, { scope: { ssoOfSchool: school.key }, reason: 'sso_removed', audit });
  });
}

/** The allowlist of stored settings. */
export function allowlistOfRow(row: SsoSettingsRow): Allowlist {
  return { provider: providerOf(row.provider), domains: row.domains?.split(' ') ?? [], tenant: row.tenant, district: row.district };
}
