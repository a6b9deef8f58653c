/**
 * The error catalogue: every error a client may see, with a stable code, its status, the exact
 * body `detail` and the headers the API promises (docs/api.md). Anything thrown that is not an
 * AppError is a bug: the client gets a generic 500 and the cause goes to the log only.
 */
export const catalogue = {
  LOGIN_REFUSED: { status: 401, detail: 'Incorrect username or password', headers: { 'www-authenticate': 'Bearer' } },
  INVALID_REFRESH_TOKEN: {
    status: 401,
    detail: 'Invalid refresh token',
    headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
  },
  INVALID_ACCESS_TOKEN: {
    status: 401,
    detail: 'Could not validate credentials',
    headers: { 'www-authenticate': 'Bearer' },
  },
  INCORRECT_PASSWORD: { status: 401, detail: 'Incorrect password', headers: { 'www-authenticate': 'Bearer' } },
  INVALID_CURSOR: { status: 400, detail: 'Invalid cursor', headers: {} },
  MFA_INVALID: { status: 401, detail: 'Invalid second factor', headers: {} },
  MFA_TOKEN_INVALID: { status: 401, detail: 'Invalid or expired mfa_token', headers: {} },
  MFA_STEP_UP_REQUIRED: {
    status: 401,
    detail: 'This operation needs a session signed in with a second factor',
    headers: { 'www-authenticate': 'Bearer error="insufficient_user_authentication", acr_values="aal2"' },
  },
  MFA_LOCKED: { status: 403, detail: 'Second factor locked; an operator must reset it', headers: {} },
  MFA_NOT_ENROLLED: { status: 409, detail: 'No second factor enrolled', headers: {} },
  MFA_THROTTLED: { status: 429, detail: 'Too many failed second factors. Try again later.', headers: {} },
  PASSKEYS_OFF: { status: 404, detail: 'Passkeys are not enabled on this server', headers: {} },
  PASSKEY_REGISTRATION_FAILED: { status: 400, detail: 'Passkey registration failed', headers: {} },
  PASSWORD_LOGIN_OFF: { status: 403, detail: 'Password sign-in is turned off for this school', headers: {} },
  PASSKEY_REQUIRED: { status: 403, detail: 'Sign in with your passkey', headers: {} },
  SSO_NOT_SET_UP: { status: 404, detail: 'Single sign-on is not set up for this school', headers: {} },
  SSO_REDIRECT_URI_INVALID: { status: 400, detail: 'redirect_uri is not one of the registered front-end addresses', headers: {} },
  SSO_CODE_CHALLENGE_INVALID: { status: 400, detail: 'code_challenge must be a PKCE S256 challenge (43 base64url characters)', headers: {} },
  SSO_STATE_INVALID: { status: 400, detail: 'This sign-in has expired or was already used: start again', headers: {} },
  SSO_CALLBACK_THROTTLED: { status: 429, detail: 'Too many failed sign-ins. Try again later.', headers: {} },
  SSO_LOGOUT_TOKEN_INVALID: { status: 400, detail: 'Invalid logout token', headers: { 'cache-control': 'no-store' } },
  RECOVERY_CODE_INVALID: { status: 401, detail: 'Invalid or expired recovery code', headers: {} },
  RECOVERY_THROTTLED: { status: 429, detail: 'Too many attempts. Try again later.', headers: { 'retry-after': '900' } },
  SSO_CODE_INVALID: { status: 401, detail: 'Invalid or expired sign-in code', headers: {} },
  BODY_UNPARSABLE: { status: 400, detail: 'There was an error parsing the body', headers: {} },
  NOT_FOUND: { status: 404, detail: 'Not Found', headers: {} },
  BODY_TOO_LARGE: { status: 413, detail: 'Request body too large', headers: {} },
  LOGIN_THROTTLED: {
    status: 429,
    detail: 'Too many failed login attempts. Try again later.',
    headers: {},
  },
  UNAVAILABLE: { status: 503, detail: 'Service temporarily unavailable', headers: { 'retry-after': '5' } },
  INTERNAL: { status: 500, detail: 'Internal Server Error', headers: {} },
} as const;

type ErrorCode = keyof typeof catalogue;

/** An error that is safe to show: its code decides the status and body, nothing else leaks. */
export class AppError extends Error {
  readonly status: number;
  readonly detail: string;
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    options: { headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(code, { cause: options.cause });
    this.name = 'AppError';
    const entry = catalogue[code];
    this.status = entry.status;
    this.detail = entry.detail;
    this.headers = { ...entry.headers, ...options.headers };
  }
}

/** A refused command-line or domain operation whose message a person can act on. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * The command line's exit codes (docs/operations.md). 1 and 2 were documented first and keep
 * their meaning; 3 to 7 tell a supervisor that the storage or the installation, not the command,
 * is at fault; no restart can mend 5 (a newer release migrated the database), 6 (the database
 * file is damaged) or 7 (the SQLite driver was built for another Node.js).
 */
export const EXIT_CODES = {
  refused: 1,
  invocation: 2,
  dataDir: 3,
  databaseUnreachable: 4,
  databaseNewer: 5,
  databaseDamaged: 6,
  driverBuild: 7,
  internal: 70,
} as const;

/** The service cannot open its storage: a one-line message naming the setting, and its exit code. */
export class StartupError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
    this.name = 'StartupError';
  }
}
