import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { defaultIssuer, issuerProblem } from './issuer.js';
import { readKeyEncryptionKey, type KeyEncryptionKey } from './key-encryption-key.js';
import { readSsoUrls, type SsoConfig } from './sso.js';
import { readWebauthnConfig, type WebauthnConfig } from './webauthn.js';
import { readNotificationsConfig, type NotificationsConfig } from './notifications.js';
import { recoveryUrlProblem, type PasswordRecoveryConfig } from './password-recovery.js';

export type JwtAlg = 'ES256' | 'EdDSA' | 'RS256';
type SqliteSynchronous = 'NORMAL' | 'FULL';

/** Every setting of the service, validated. Only this module reads the environment. */
export interface Config {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly database: {
    readonly poolSize: number;
    readonly statementTimeoutMs: number;
    readonly connectTimeoutMs: number;
    readonly ssl: 'off' | 'require' | 'verify-full';
    readonly sslCaFile: string | undefined;
    /** Hot queries as named prepared statements; off behind a pooler that cannot keep them. */
    readonly preparedStatements: boolean;
  };
  readonly sqliteSynchronous: SqliteSynchronous;
  readonly issuer: string;
  readonly audience: string;
  readonly jwtAlg: JwtAlg;
  readonly accessTokenTtl: number;
  readonly refreshIdleTimeout: number;
  readonly refreshAbsoluteLifetime: number;
  readonly refreshTokenRotation: boolean;
  readonly refreshReuseGrace: number;
  readonly keyActivationDelay: number;
  readonly keyCacheSeconds: number;
  readonly argon2: { readonly memoryCost: number; readonly timeCost: number; readonly parallelism: number };
  readonly hashConcurrency: number;
  readonly hashQueueLimit: number;
  readonly throttle: ThrottleConfig;
  readonly bodyLimit: number;
  readonly requestTimeout: number;
  readonly trustProxy: readonly string[];
  readonly logLevel: string;
  readonly shutdownTimeout: number;
  /** Seconds between the audit sealer's rounds (AUDIT_SEAL_INTERVAL); the sealer runs at least once a minute whatever this says. */
  readonly auditSealInterval: number;
  readonly metricsEnabled: boolean;
  /** The management listener (/metrics, /healthz, /readyz); undefined with MANAGEMENT_PORT=off. */
  readonly management: { readonly host: string; readonly port: number } | undefined;
  readonly docsEnabled: boolean;
  readonly corsOrigins: readonly string[];
  /** Encrypts private signing keys at rest (KEY_ENCRYPTION_KEY_FILE); undefined stores them in plaintext. */
  readonly keyEncryption: KeyEncryptionKey | undefined;
  /** Passkeys and security keys (WEBAUTHN_*); undefined when WEBAUTHN_RP_ID is unset. */
  readonly webauthn: WebauthnConfig | undefined;
  /** Single sign-on (PUBLIC_URL, SSO_*). */
  readonly sso: SsoConfig;
  /** E-mail notifications and webhooks (SMTP_*, WEBHOOK_*). */
  readonly notifications: NotificationsConfig;
  /** Password recovery by e-mail (PASSWORD_RECOVERY_*). */
  readonly passwordRecovery: PasswordRecoveryConfig;
  /** What `prune` keeps, in days (AUDIT_RETENTION_DAYS: 0 keeps every event; SESSION_RETENTION_DAYS). */
  readonly retention: { readonly auditDays: number; readonly sessionDays: number };
}

/** Brute-force throttling, in the layers of docs/design.md ("Brute force"); counts are failures, times are seconds. */
export interface ThrottleConfig {
  readonly enabled: boolean;
  /** Layer 1, per (account, client IP): failures before the backoff starts, over this window. */
  readonly accountIpFreeFailures: number;
  readonly accountIpWindow: number;
  /** Layer 2, per account across IPs, except IPs that signed in to it within knownIpDays. */
  readonly accountFailures: number;
  readonly accountWindow: number;
  readonly knownIpDays: number;
  /** Layer 3, per client IP across accounts (password spraying). */
  readonly ipFailures: number;
  readonly ipWindow: number;
  /** Layer 4: consecutive failures that lock an account until unlocked. */
  readonly lockoutFailures: number;
  /** The longest backoff wait. */
  readonly maxWait: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/** Collects every problem instead of stopping at the first, so one start-up attempt shows them all. */
class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  string(name: string, fallback: string): string {
    const raw = this.env[name]?.trim();
    return raw === undefined || raw === '' ? fallback : raw;
  }

  optional(name: string): string | undefined {
    const raw = this.env[name]?.trim();
    return raw === undefined || raw === '' ? undefined : raw;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      this.problems.push(`${name}=${JSON.stringify(raw)}: expected a whole number from ${min} to ${max}`);
      return fallback;
    }
    return Number(raw);
  }

  oneOf<T extends string>(name: string, fallback: T, allowed: readonly T[]): T {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const match = allowed.find((value) => value.toLowerCase() === raw.toLowerCase());
    if (match === undefined) {
      this.problems.push(`${name}=${JSON.stringify(raw)}: expected one of ${allowed.join(', ')}`);
      return fallback;
    }
    return match;
  }

  bool(name: string, fallback: boolean): boolean {
    const raw = this.optional(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (['on', 'true', '1', 'yes'].includes(raw)) return true;
    if (['off', 'false', '0', 'no'].includes(raw)) return false;
    this.problems.push(`${name}=${JSON.stringify(raw)}: expected on or off`);
    return fallback;
  }

  origins(name: string): string[] {
    const raw = this.optional(name);
    if (raw === undefined) return [];
    const entries = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
    for (const entry of entries) {
      if (!/^https?:\/\/[^/\s]+$/.test(entry)) this.problems.push(`${name}: ${JSON.stringify(entry)} is not an origin like https://admin.example.org`);
    }
    return entries;
  }

  proxies(name: string): string[] {
    const raw = this.optional(name);
    if (raw === undefined) return [];
    const entries = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
    for (const entry of entries) {
      const [address, bits] = entry.split('/');
      const family = isIP(address ?? '');
      const bitsOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
      if (family === 0 || !bitsOk) this.problems.push(`${name}: ${JSON.stringify(entry)} is not an IP address or CIDR range`);
    }
    return entries;
  }

  /** A key file is read once, at start: the key never sits in the environment. */
  keyFile(name: string): KeyEncryptionKey | undefined {
    const path = this.optional(name);
    if (path === undefined) return undefined;
    const key = readKeyEncryptionKey(name, path);
    if (typeof key === 'string') {
      this.problems.push(key);
      return undefined;
    }
    return key;
  }
}

/**
 * The management listener, as Keycloak's management interface: port 9000, and (unlike Keycloak)
 * on loopback unless told otherwise, so a fresh install shows its metrics to no other machine.
 */
function readManagement(read: Reader, port: number): Config['management'] {
  if (read.optional('MANAGEMENT_PORT')?.toLowerCase() === 'off') return undefined;
  const managementPort = read.int('MANAGEMENT_PORT', 9000, 0, 65535);
  if (managementPort !== 0 && managementPort === port) read.problems.push(`MANAGEMENT_PORT: must differ from PORT (${port}), or be off`);
  return { host: read.string('MANAGEMENT_HOST', '127.0.0.1'), port: managementPort };
}

function readWebauthn(read: Reader): WebauthnConfig | undefined {
  const names = { rpId: 'WEBAUTHN_RP_ID', rpName: 'WEBAUTHN_RP_NAME', origins: 'WEBAUTHN_ORIGINS' } as const;
  const { config, problems } = readWebauthnConfig({ rpId: read.optional(names.rpId), rpName: read.optional(names.rpName), origins: read.optional(names.origins) });
  read.problems.push(...problems);
  return config;
}

function readNotifications(read: Reader): NotificationsConfig {
  const { config, problems } = readNotificationsConfig({
    smtpUrl: read.optional('SMTP_URL'),
    smtpFrom: read.optional('SMTP_FROM'),
    allowPrivate: read.optional('WEBHOOK_ALLOW_PRIVATE'),
    allowHttpLoopback: read.bool('WEBHOOK_ALLOW_HTTP_LOOPBACK', false),
  });
  read.problems.push(...problems);
  return config;
}

function readPasswordRecovery(read: Reader): PasswordRecoveryConfig {
  const url = read.optional('PASSWORD_RECOVERY_URL');
  const problem = recoveryUrlProblem(url);
  if (problem !== undefined) read.problems.push(problem);
  return { ttl: read.int('PASSWORD_RECOVERY_TTL', 900, 60, 86_400), url };
}

function readSso(read: Reader, issuer: string): SsoConfig {
  const { publicUrl, redirectUris, problems } = readSsoUrls({ publicUrl: read.optional('PUBLIC_URL'), issuer, redirectUris: read.optional('SSO_REDIRECT_URIS') });
  read.problems.push(...problems);
  return {
    publicUrl,
    redirectUris,
    sessionMaxAge: read.int('SSO_SESSION_MAX_AGE', 43_200, 60, 31_536_000),
    allowHttpLoopback: read.bool('SSO_ALLOW_HTTP_LOOPBACK', false),
  };
}

/** Reads and validates the configuration; throws ConfigError listing every invalid variable. */
export function loadConfig(env: Env = process.env): Config {
  const read = new Reader(env);
  const host = read.string('HOST', '127.0.0.1');
  const port = read.int('PORT', 8000, 0, 65535);
  const databaseUrl = read.optional('DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    read.problems.push('DATABASE_URL: expected a postgres:// or postgresql:// URL (leave it unset for SQLite)');
  }
  const accessTokenTtl = read.int('ACCESS_TOKEN_TTL', 900, 30, 86_400);
  const refreshIdleTimeout = read.int('REFRESH_IDLE_TIMEOUT', 3600, 60, 31_536_000);
  const refreshAbsoluteLifetime = read.int('REFRESH_ABSOLUTE_LIFETIME', 43_200, 60, 31_536_000);
  if (refreshIdleTimeout > refreshAbsoluteLifetime) {
    read.problems.push('REFRESH_IDLE_TIMEOUT: must not exceed REFRESH_ABSOLUTE_LIFETIME');
  }
  const issuer = read.optional('ISSUER');
  const issuerRule = issuerProblem({ host, databaseUrl, issuer });
  if (issuerRule !== undefined) read.problems.push(issuerRule);
  const config: Config = {
    host,
    port,
    dataDir: resolve(read.string('DATA_DIR', './data')),
    databaseUrl,
    database: {
      poolSize: read.int('DATABASE_POOL_SIZE', 10, 1, 1000),
      statementTimeoutMs: read.int('DATABASE_STATEMENT_TIMEOUT_MS', 5000, 0, 600_000),
      connectTimeoutMs: read.int('DATABASE_CONNECT_TIMEOUT_MS', 5000, 100, 600_000),
      ssl: read.oneOf('DATABASE_SSL', 'off', ['off', 'require', 'verify-full'] as const),
      sslCaFile: read.optional('DATABASE_SSL_CA_FILE'),
      preparedStatements: read.bool('DATABASE_PREPARED_STATEMENTS', true),
    },
    sqliteSynchronous: read.oneOf('SQLITE_SYNCHRONOUS', 'NORMAL', ['NORMAL', 'FULL'] as const),
    issuer: issuer ?? defaultIssuer(host, port),
    audience: read.string('AUDIENCE', 'school-admin'),
    jwtAlg: read.oneOf('JWT_ALG', 'ES256', ['ES256', 'EdDSA', 'RS256'] as const),
    accessTokenTtl,
    refreshIdleTimeout,
    refreshAbsoluteLifetime,
    refreshTokenRotation: read.bool('REFRESH_TOKEN_ROTATION', false),
    refreshReuseGrace: read.int('REFRESH_REUSE_GRACE', 10, 0, 300),
    keyActivationDelay: read.int('KEY_ACTIVATION_DELAY', 60, 0, 86_400),
    keyCacheSeconds: read.int('KEY_CACHE_SECONDS', 10, 1, 3600),
    argon2: {
      memoryCost: read.int('ARGON2_MEMORY_KIB', 19_456, 19_456, 4_194_304),
      timeCost: read.int('ARGON2_ITERATIONS', 2, 2, 100),
      parallelism: read.int('ARGON2_PARALLELISM', 1, 1, 64),
    },
    hashConcurrency: read.int('HASH_CONCURRENCY', 2, 1, 64),
    hashQueueLimit: read.int('HASH_QUEUE_LIMIT', 64, 0, 100_000),
    throttle: {
      enabled: read.bool('LOGIN_THROTTLE', true),
      accountIpFreeFailures: read.int('THROTTLE_ACCOUNT_IP_FREE_FAILURES', 5, 1, 1000),
      accountIpWindow: read.int('THROTTLE_ACCOUNT_IP_WINDOW', 86_400, 60, 31_536_000),
      accountFailures: read.int('THROTTLE_ACCOUNT_FAILURES', 50, 1, 100_000),
      accountWindow: read.int('THROTTLE_ACCOUNT_WINDOW', 86_400, 60, 31_536_000),
      knownIpDays: read.int('THROTTLE_KNOWN_IP_DAYS', 30, 0, 3650),
      ipFailures: read.int('THROTTLE_IP_FAILURES', 20, 1, 1_000_000),
      ipWindow: read.int('THROTTLE_IP_WINDOW', 300, 1, 86_400),
      lockoutFailures: read.int('LOCKOUT_FAILURES', 100, 1, 1_000_000),
      maxWait: read.int('THROTTLE_MAX_WAIT', 900, 1, 86_400),
    },
    bodyLimit: read.int('BODY_LIMIT', 16_384, 256, 10_485_760),
    requestTimeout: read.int('REQUEST_TIMEOUT', 30, 1, 600),
    trustProxy: read.proxies('TRUST_PROXY'),
    logLevel: read.oneOf('LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
    shutdownTimeout: read.int('SHUTDOWN_TIMEOUT', 10, 0, 600),
    auditSealInterval: read.int('AUDIT_SEAL_INTERVAL', 5, 1, 3600),
    metricsEnabled: read.bool('METRICS_ENABLED', true),
    management: readManagement(read, port),
    docsEnabled: read.bool('DOCS_ENABLED', true),
    corsOrigins: read.origins('CORS_ORIGINS'),
    keyEncryption: read.keyFile('KEY_ENCRYPTION_KEY_FILE'),
    webauthn: readWebauthn(read),
    sso: readSso(read, issuer ?? defaultIssuer(host, port)),
    notifications: readNotifications(read),
    passwordRecovery: readPasswordRecovery(read),
    retention: { auditDays: read.int('AUDIT_RETENTION_DAYS', 730, 0, 36_500), sessionDays: read.int('SESSION_RETENTION_DAYS', 7, 0, 3650) },
  };
  if (read.problems.length > 0) throw new ConfigError(read.problems);
  return config;
}

/** Loads `.env` from the working directory when present; real environment variables win. */
export function loadDotEnv(path = '.env'): void {
  try {
    process.loadEnvFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
