import type { Config } from './config.js';
import { maskUrl } from './masked-url.js';

export type SettingValue = string | number | boolean | null;

const list = (values: readonly string[]): string | null => (values.length === 0 ? null : values.join(','));

/** Where each storage setting applies: PostgreSQL ones without DATA_DIR, SQLite ones without DATABASE_*. */
function storageSettings(config: Config): Record<string, SettingValue> {
  if (config.databaseUrl === undefined) {
    return { DATA_DIR: config.dataDir, SQLITE_SYNCHRONOUS: config.sqliteSynchronous };
  }
  return {
    DATABASE_URL: maskUrl(config.databaseUrl),
    DATABASE_POOL_SIZE: config.database.poolSize,
    DATABASE_STATEMENT_TIMEOUT_MS: config.database.statementTimeoutMs,
    DATABASE_CONNECT_TIMEOUT_MS: config.database.connectTimeoutMs,
    DATABASE_SSL: config.database.ssl,
    ...(config.database.ssl === 'verify-full' ? { DATABASE_SSL_CA_FILE: config.database.sslCaFile ?? null } : {}),
    DATABASE_PREPARED_STATEMENTS: config.database.preparedStatements,
  };
}

function throttleSettings({ throttle }: Config): Record<string, SettingValue> {
  if (!throttle.enabled) return { LOGIN_THROTTLE: false };
  return {
    LOGIN_THROTTLE: true,
    THROTTLE_ACCOUNT_IP_FREE_FAILURES: throttle.accountIpFreeFailures,
    THROTTLE_ACCOUNT_IP_WINDOW: throttle.accountIpWindow,
    THROTTLE_ACCOUNT_FAILURES: throttle.accountFailures,
    THROTTLE_ACCOUNT_WINDOW: throttle.accountWindow,
    THROTTLE_KNOWN_IP_DAYS: throttle.knownIpDays,
    THROTTLE_IP_FAILURES: throttle.ipFailures,
    THROTTLE_IP_WINDOW: throttle.ipWindow,
    LOCKOUT_FAILURES: throttle.lockoutFailures,
    THROTTLE_MAX_WAIT: throttle.maxWait,
  };
}

function optionalSettings(config: Config): Record<string, SettingValue> {
  const management: Record<string, SettingValue> = config.management === undefined ? { MANAGEMENT_PORT: 'off' } : { MANAGEMENT_HOST: config.management.host, MANAGEMENT_PORT: config.management.port };
  const webauthn: Record<string, SettingValue> =
    config.webauthn === undefined
      ? { WEBAUTHN_RP_ID: null }
      : { WEBAUTHN_RP_ID: config.webauthn.rpId, WEBAUTHN_RP_NAME: config.webauthn.rpName, WEBAUTHN_ORIGINS: list(config.webauthn.origins) };
  const { smtp, webhookAllowPrivate, webhookAllowHttpLoopback } = config.notifications;
  const notifications: Record<string, SettingValue> = {
    SMTP_URL: smtp === undefined ? null : maskUrl(smtp.url),
    ...(smtp === undefined ? {} : { SMTP_FROM: smtp.from }),
    WEBHOOK_ALLOW_PRIVATE: list(webhookAllowPrivate),
    ...(webhookAllowHttpLoopback ? { WEBHOOK_ALLOW_HTTP_LOOPBACK: true } : {}),
  };
  const recovery = { PASSWORD_RECOVERY_TTL: config.passwordRecovery.ttl, PASSWORD_RECOVERY_URL: config.passwordRecovery.url ?? null };
  const retention = { AUDIT_RETENTION_DAYS: config.retention.auditDays, SESSION_RETENTION_DAYS: config.retention.sessionDays };
  return { ...management, METRICS_ENABLED: config.metricsEnabled, ...webauthn, ...notifications, ...recovery, ...retention };
}

/**
 * The effective configuration under the names an operator sets (`PORT`, not `port`), with only
 * what applies to this installation: no DATA_DIR on PostgreSQL, no throttle tuning when the
 * throttle is off. No secret is shown: URLs have their passwords masked, KEY_ENCRYPTION_KEY_FILE
 * is the file's name.
 */
export function describeSettings(config: Config): Record<string, SettingValue> {
  return {
    HOST: config.host,
    PORT: config.port,
    ...storageSettings(config),
    ISSUER: config.issuer,
    AUDIENCE: config.audience,
    JWT_ALG: config.jwtAlg,
    ACCESS_TOKEN_TTL: config.accessTokenTtl,
    REFRESH_IDLE_TIMEOUT: config.refreshIdleTimeout,
    REFRESH_ABSOLUTE_LIFETIME: config.refreshAbsoluteLifetime,
    REFRESH_TOKEN_ROTATION: config.refreshTokenRotation,
    ...(config.refreshTokenRotation ? { REFRESH_REUSE_GRACE: config.refreshReuseGrace } : {}),
    KEY_ACTIVATION_DELAY: config.keyActivationDelay,
    KEY_CACHE_SECONDS: config.keyCacheSeconds,
    KEY_ENCRYPTION_KEY_FILE: config.keyEncryption?.file ?? null,
    ARGON2_MEMORY_KIB: config.argon2.memoryCost,
    ARGON2_ITERATIONS: config.argon2.timeCost,
    ARGON2_PARALLELISM: config.argon2.parallelism,
    HASH_CONCURRENCY: config.hashConcurrency,
    HASH_QUEUE_LIMIT: config.hashQueueLimit,
    ...throttleSettings(config),
    BODY_LIMIT: config.bodyLimit,
    REQUEST_TIMEOUT: config.requestTimeout,
    TRUST_PROXY: list(config.trustProxy),
    CORS_ORIGINS: list(config.corsOrigins),
    LOG_LEVEL: config.logLevel,
    SHUTDOWN_TIMEOUT: config.shutdownTimeout,
    ...optionalSettings(config),
    DOCS_ENABLED: config.docsEnabled,
  };
}
