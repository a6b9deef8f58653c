/**
 * Every setting loadConfig reads, so that a name close to one of them can be told apart from
 * another program's variable; test/config/known-settings.test.ts keeps the two equal. In the
 * README's order, which also settles which of two equally close settings is suggested.
 */
export const KNOWN_SETTINGS: readonly string[] = [
  'HOST',
  'PORT',
  'DATA_DIR',
  'DATABASE_URL',
  'DATABASE_POOL_SIZE',
  'DATABASE_STATEMENT_TIMEOUT_MS',
  'DATABASE_CONNECT_TIMEOUT_MS',
  'DATABASE_SSL',
  'DATABASE_SSL_CA_FILE',
  'DATABASE_PREPARED_STATEMENTS',
  'SQLITE_SYNCHRONOUS',
  'ISSUER',
  'AUDIENCE',
  'JWT_ALG',
  'ACCESS_TOKEN_TTL',
  'REFRESH_IDLE_TIMEOUT',
  'REFRESH_ABSOLUTE_LIFETIME',
  'REFRESH_TOKEN_ROTATION',
  'REFRESH_REUSE_GRACE',
  'KEY_ACTIVATION_DELAY',
  'KEY_CACHE_SECONDS',
  'KEY_ENCRYPTION_KEY_FILE',
  'ARGON2_MEMORY_KIB',
  'ARGON2_ITERATIONS',
  'ARGON2_PARALLELISM',
  'HASH_CONCURRENCY',
  'HASH_QUEUE_LIMIT',
  'LOGIN_THROTTLE',
  'THROTTLE_ACCOUNT_IP_FREE_FAILURES',
  'THROTTLE_ACCOUNT_IP_WINDOW',
  'THROTTLE_ACCOUNT_FAILURES',
  'THROTTLE_ACCOUNT_WINDOW',
  'THROTTLE_KNOWN_IP_DAYS',
  'THROTTLE_IP_FAILURES',
  'THROTTLE_IP_WINDOW',
  'LOCKOUT_FAILURES',
  'THROTTLE_MAX_WAIT',
  'BODY_LIMIT',
  'REQUEST_TIMEOUT',
  'TRUST_PROXY',
  'CORS_ORIGINS',
  'LOG_LEVEL',
  'SHUTDOWN_TIMEOUT',
  'METRICS_ENABLED',
  'MANAGEMENT_HOST',
  'MANAGEMENT_PORT',
  'DOCS_ENABLED',
  'WEBAUTHN_RP_ID',
  'WEBAUTHN_ORIGINS',
  'WEBAUTHN_RP_NAME',
  'PUBLIC_URL',
  'SSO_REDIRECT_URIS',
  'SSO_SESSION_MAX_AGE',
  'SSO_ALLOW_HTTP_LOOPBACK',
  'AUDIT_SEAL_INTERVAL',
];

/**
 * The first words of our settings, with their underscore (`ACCESS_`, `SSO_`, ...): a variable
 * that begins with one is meant for school-auth.
 */
export const SETTING_PREFIXES: readonly string[] = [...new Set(KNOWN_SETTINGS.filter((name) => name.includes('_')).map((name) => `${name.split('_')[0]!}_`))];
