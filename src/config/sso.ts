import { isLoopbackHost } from './issuer.js';

/** Single sign-on settings (docs/sso.md). */
export interface SsoConfig {
  /** Where the service is reached from browsers; the IdP redirects to `<publicUrl>/admin/auth/sso/callback`. */
  readonly publicUrl: string;
  /** The front-end pages a sign-in may return to, compared as exact strings. */
  readonly redirectUris: readonly string[];
  /** Seconds a session signed in through an IdP lives at most, whatever the refresh activity. */
  readonly sessionMaxAge: number;
  /** Plain http for a loopback issuer (tests and development only). */
  readonly allowHttpLoopback: boolean;
}

interface SsoSettings {
  readonly publicUrl: string | undefined;
  readonly issuer: string;
  readonly redirectUris: string | undefined;
}

/** True for a URL's host name that never leaves the machine (IPv6 as the URL parser writes it, in brackets). */
export function isLoopbackUrlHost(hostname: string): boolean {
  return isLoopbackHost(hostname.replace(/^\[(.*)\]$/, '$1'));
}

/**
 * A redirect URI must be https (http only on a loopback host), without userinfo or fragment, and
 * written exactly as a URL parser writes it back: requests are compared with the entries as
 * strings, so an entry that parses to something else would never match, or match the wrong page.
 */
function redirectUriProblem(entry: string): string | undefined {
  if (!URL.canParse(entry)) return `${JSON.stringify(entry)} is not an absolute URL`;
  const url = new URL(entry);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackUrlHost(url.hostname))) {
    return `${JSON.stringify(entry)} is not https (only a loopback host such as localhost or 127.0.0.1 may use http)`;
  }
  if (url.username !== '' || url.password !== '') return `${JSON.stringify(entry)} must not contain userinfo`;
  if (url.hash !== '' || entry.includes('#')) return `${JSON.stringify(entry)} must not contain a fragment`;
  if (url.href !== entry) return `${JSON.stringify(entry)} is not in canonical form: write it as ${JSON.stringify(url.href)}`;
  return undefined;
}

function publicUrlProblem(publicUrl: string): string | undefined {
  if (!URL.canParse(publicUrl)) return `PUBLIC_URL=${JSON.stringify(publicUrl)}: expected an absolute http(s) URL`;
  const url = new URL(publicUrl);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `PUBLIC_URL=${JSON.stringify(publicUrl)}: expected an absolute http(s) URL`;
  if (url.search !== '' || url.hash !== '' || url.username !== '') return `PUBLIC_URL=${JSON.stringify(publicUrl)}: no query, fragment or userinfo`;
  return undefined;
}

/** Validates PUBLIC_URL and SSO_REDIRECT_URIS; each problem names its variable. */
export function readSsoUrls(settings: SsoSettings): { publicUrl: string; redirectUris: string[]; problems: string[] } {
  const publicUrl = (settings.publicUrl ?? settings.issuer).replace(/\/+$/, '');
  const problems: string[] = [];
  const publicProblem = publicUrlProblem(publicUrl);
  if (publicProblem !== undefined) problems.push(publicProblem);
  const redirectUris = (settings.redirectUris ?? '').split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  for (const entry of redirectUris) {
    const problem = redirectUriProblem(entry);
    if (problem !== undefined) problems.push(`SSO_REDIRECT_URIS: ${problem}`);
  }
  return { publicUrl, redirectUris, problems };
}
