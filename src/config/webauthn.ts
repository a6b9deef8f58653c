import { isIP } from 'node:net';

/** The WebAuthn relying party: who passkeys are registered to, and the pages allowed to use them. */
export interface WebauthnConfig {
  readonly rpId: string;
  readonly rpName: string;
  readonly origins: readonly string[];
}

interface WebauthnSettings {
  readonly rpId: string | undefined;
  readonly rpName: string | undefined;
  readonly origins: string | undefined;
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * Checks one origin against the RP ID. Browsers allow WebAuthn only in a secure context and
 * only for an RP ID that is the page's host or a parent of it; without TLS only localhost is
 * a secure context that can also be an RP ID (an IP address never can).
 */
function originProblem(origin: string, rpId: string): string | undefined {
  const match = /^(https?):\/\/([^/:\s]+)(:\d{1,5})?$/.exec(origin);
  if (match === null) return `${JSON.stringify(origin)} is not an origin like https://admin.school.example`;
  const [, scheme, host = '', port] = match;
  if (port !== undefined && Number(port.slice(1)) > 65535) return `${JSON.stringify(origin)} has no valid port`;
  if (scheme === 'http' && host !== 'localhost') return `${JSON.stringify(origin)} is not https (only http://localhost may go without TLS)`;
  if (host !== rpId && !host.endsWith(`.${rpId}`)) return `${JSON.stringify(origin)} is not WEBAUTHN_RP_ID (${rpId}) or a subdomain of it`;
  return undefined;
}

/**
 * Validates the WEBAUTHN_* settings; passkeys are off when WEBAUTHN_RP_ID is unset. Returns the
 * settings, or the problems, each naming its variable.
 */
export function readWebauthnConfig(settings: WebauthnSettings): { config?: WebauthnConfig; problems: string[] } {
  const { rpId, rpName, origins } = settings;
  if (rpId === undefined) {
    const stray = [origins === undefined ? [] : ['WEBAUTHN_ORIGINS'], rpName === undefined ? [] : ['WEBAUTHN_RP_NAME']].flat();
    return { problems: stray.map((name) => `${name}: set WEBAUTHN_RP_ID too, or passkeys stay off`) };
  }
  const problems: string[] = [];
  if (!DOMAIN.test(rpId) || isIP(rpId) !== 0) {
    problems.push(`WEBAUTHN_RP_ID=${JSON.stringify(rpId)}: expected a lowercase domain name such as school.example, without scheme, port or path (an IP address cannot be a WebAuthn relying party)`);
  }
  const name = rpName ?? 'school-auth';
  if (name.length > 64) problems.push('WEBAUTHN_RP_NAME: at most 64 characters');
  const list = (origins ?? '').split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  if (list.length === 0) problems.push('WEBAUTHN_ORIGINS: required with WEBAUTHN_RP_ID: the origins of the pages that use passkeys, e.g. https://admin.school.example');
  for (const origin of list) {
    const problem = originProblem(origin, rpId);
    if (problem !== undefined) problems.push(`WEBAUTHN_ORIGINS: ${problem}`);
  }
  return problems.length > 0 ? { problems } : { config: { rpId, rpName: name, origins: list }, problems };
}
