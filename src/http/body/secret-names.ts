/**
 * The one rule that decides which members of a request body are never echoed in an error body:
 * a member whose name, split into words (snake_case, kebab-case, camelCase, digits), contains a
 * word that names a secret. A confused client that sends `recovery_code`, `client_secret`,
 * `codeVerifier` or `new-password` to the wrong endpoint gets them back as "[redacted]", at any
 * depth, exactly as `password` (docs/http-edge.md). Redacting a harmless member costs nothing; echoing a
 * secret into a log or a browser console cannot be undone.
 */
const SECRET_WORDS: ReadonlySet<string> = new Set([
  'password',
  'passwd',
  'passphrase',
  'pass',
  'pwd',
  'secret',
  'token',
  'code',
  'otp',
  'totp',
  'pin',
  'verifier',
  'key',
  'cookie',
  'authorization',
  'signature',
  'assertion',
]);

/** The words of a member name, lower case: `clientSecret2` and `client-secret` give client, secret. */
function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z]+/);
}

/** Whether a body member called `name` may hold a secret; plurals count (`recovery_codes`). */
export function isSecretName(name: string): boolean {
  for (const word of wordsOf(name)) {
    if (SECRET_WORDS.has(word)) return true;
    if (word.endsWith('s') && SECRET_WORDS.has(word.slice(0, -1))) return true;
  }
  return false;
}
