import { Type, type TSchema } from '@sinclair/typebox';
import type {} from '@fastify/swagger';

/** Length limits of the contract's fields (FastAPI's have none): beyond them a field is a 422 `string_too_long`. */
export const LIMITS = { school_id: 128, username: 256, password: 1024, refresh_token: 512 } as const;

export const LoginBody = Type.Object({
  school_id: Type.String({ maxLength: LIMITS.school_id, description: 'Identifier of the school' }),
  username: Type.String({ maxLength: LIMITS.username, description: 'Administrator user name' }),
  password: Type.String({ maxLength: LIMITS.password, description: 'Administrator password', format: 'password' }),
});

export const RefreshTokenBody = Type.Object({
  refresh_token: Type.String({ maxLength: LIMITS.refresh_token, description: 'Refresh token from login' }),
});

const expiresIn = Type.Integer({ description: 'Lifetime of the access token, in seconds' });
const refreshExpiresIn = Type.Integer({ description: "Seconds until the refresh token's absolute expiry" });

export const LoginResponse = Type.Object(
  {
  access_token: Type.String(),
  expires_in: expiresIn,
  school_id: Type.String({ description: 'The stored school id of the account that signed in' }),
  username: Type.String({ description: 'The stored username of the account that signed in' }),
  token_type: Type.Literal('bearer'),
  refresh_token: Type.String(),
  refresh_expires_in: refreshExpiresIn,
  },
  { description: 'Signed in; header Cache-Control: no-store' },
);

export const RefreshResponse = Type.Object(
  {
  access_token: Type.String(),
  expires_in: expiresIn,
  token_type: Type.Literal('bearer'),
  refresh_token: Type.Optional(Type.String({ description: 'Only when refresh-token rotation is on' })),
  refresh_expires_in: Type.Optional(refreshExpiresIn),
  },
  { description: 'New access token; header Cache-Control: no-store' },
);

export const MeResponse = Type.Object(
  {
  sub: Type.String({ description: 'Stable administrator id' }),
  school_id: Type.String(),
  username: Type.String(),
  sid: Type.String({ description: 'Session id' }),
  iat: Type.Integer(),
  exp: Type.Integer(),
  acr: Type.Union([Type.Literal('aal1'), Type.Literal('aal2')], { description: 'aal1: password only; aal2: with a second factor' }),
  amr: Type.Array(Type.String(), { description: 'How the session signed in (RFC 8176): pwd, otp, mfa' }),
  },
  { description: 'The administrator and session the token belongs to' },
);

/** An error body `{"detail": "..."}`, described for the OpenAPI document. */
export function errorBody(description: string, detail: string) {
  return Type.Object({ detail: Type.String({ examples: [detail] }) }, { description });
}

export const ErrorBodies = {
  badBody: errorBody('Body bytes are not valid UTF-8, or the JSON is nested too deep', 'There was an error parsing the body'),
  loginRefused: errorBody('Login refused, whatever the reason; header WWW-Authenticate: Bearer', 'Incorrect username or password'),
  invalidRefreshToken: errorBody(
    'Refresh token unknown, expired, revoked or reused; header WWW-Authenticate: Bearer error="invalid_token"',
    'Invalid refresh token',
  ),
  invalidAccessToken: errorBody('Missing, invalid or expired bearer token, or its session ended', 'Could not validate credentials'),
  tooLarge: errorBody('Body over BODY_LIMIT bytes', 'Request body too large'),
  throttled: errorBody('Too many failed logins; header Retry-After (seconds)', 'Too many failed login attempts. Try again later.'),
  unavailable: errorBody('Database unreachable or password-hashing queue full; header Retry-After', 'Service temporarily unavailable'),
};

export const ValidationErrorBody = Type.Object(
  {
  detail: Type.Array(
    Type.Object({
      type: Type.String(),
      loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
      msg: Type.String(),
      input: Type.Unknown(),
      ctx: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  ),
  },
  { description: 'Validation failed: FastAPI/Pydantic v2 items (secrets echoed as "[redacted]")' },
);

/** The error answers every body-taking route can give, for its response schema. */
export function bodyErrors(extra: Record<number, TSchema> = {}): Record<number, TSchema> {
  return { 400: ErrorBodies.badBody, 413: ErrorBodies.tooLarge, 422: ValidationErrorBody, 503: ErrorBodies.unavailable, ...extra };
}
