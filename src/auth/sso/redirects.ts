import type { Config } from '../../config/config.js';

/** The one redirect URI registered at every IdP. */
export function callbackUrl(config: Pick<Config, 'sso'>): string {
  return `${config.sso.publicUrl}/admin/auth/sso/callback`;
}

/** The front end's registered address with the answer's parameters added (its own query kept). */
export function frontEndRedirect(redirectUri: string, parameters: Record<string, string>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
  return url.href;
}

/** The refusal the front end sees, whatever the reason: details go to the audit trail only. */
export const ACCESS_DENIED = { error: 'access_denied', error_description: 'Sign-in was refused. Ask your school administrator if this persists.' };

export const UNAVAILABLE = { error: 'temporarily_unavailable', error_description: 'The identity provider is not responding. Try again later.' };
