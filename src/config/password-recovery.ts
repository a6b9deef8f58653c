/** Password recovery by e-mail (PASSWORD_RECOVERY_*), docs/operations.md, "Password recovery". */
export interface PasswordRecoveryConfig {
  /** Seconds a recovery code works. */
  readonly ttl: number;
  /** The front end's page that completes a recovery; the code is put in its fragment. Undefined: mails carry the code alone. */
  readonly url: string | undefined;
}

/** The page's URL must be https (or http on loopback, for development) and carry no fragment of its own. */
export function recoveryUrlProblem(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'PASSWORD_RECOVERY_URL: expected the URL of the front end page that completes a recovery, e.g. https://admin.school.example/reset';
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(parsed.hostname);
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && loopback)) return 'PASSWORD_RECOVERY_URL: must be https (http only on localhost)';
  // Not parsed.hash: it is '' for a bare trailing '#', whose link would start its fragment with '#'.
  if (url.includes('#')) return 'PASSWORD_RECOVERY_URL: must have no #fragment: the recovery code is put there';
  return undefined;
}
