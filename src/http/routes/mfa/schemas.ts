import { Type } from '@sinclair/typebox';
import { credentialSchema } from './passkey-schemas.js';
import { errorBody } from '../schemas.js';

/** Length limits of the second-factor fields: beyond them a 422 `string_too_long`. */
const MFA_LIMITS = { mfa_token: 128, method: 32, code: 64, factor_id: 64 } as const;

const mfaToken = Type.String({ maxLength: MFA_LIMITS.mfa_token, description: 'The mfa_token of the 403 login answer', format: 'password' });
const code = Type.String({ maxLength: MFA_LIMITS.code, description: 'A 6-digit TOTP code or a recovery code', format: 'password' });
const mfaMethods = Type.Array(Type.Union([Type.Literal('totp'), Type.Literal('webauthn'), Type.Literal('recovery_code')]), {
  description: 'What the admin can answer with',
});
const recoveryCodes = Type.Array(Type.String(), { description: '10 single-use codes, shown this once' });

export const MfaVerifyBody = Type.Object({
  mfa_token: mfaToken,
  method: Type.String({ maxLength: MFA_LIMITS.method, enum: ['totp', 'webauthn', 'recovery_code'], description: '`totp`, `webauthn` or `recovery_code`' }),
  code: Type.Optional(code),
  credential: Type.Optional(
    credentialSchema('With `webauthn`: the result of navigator.credentials.get() for the options of POST /admin/auth/mfa/webauthn/options, as credential.toJSON()'),
  ),
});

export const TotpConfirmBody = Type.Object({
  factor_id: Type.String({ maxLength: MFA_LIMITS.factor_id }),
  code,
});

const challengeFields = {
  mfa_token: Type.String({ description: 'Opaque, 256 bits; answer with POST /admin/auth/mfa/verify within expires_in seconds' }),
  mfa_methods: mfaMethods,
  expires_in: Type.Integer({ description: 'Seconds the mfa_token lives (300)' }),
};

export const SecondFactorRequired = Type.Object(
  { detail: Type.Union([Type.Literal('Second factor required'), Type.Literal('Second factor enrollment required')]), ...challengeFields },
  { description: 'Right password, second factor needed: verify it (or, with mfa_methods empty, enroll one with the mfa_token as bearer)' },
);

export const TotpEnrollment = Type.Object(
  {
    factor_id: Type.String(),
    secret: Type.String({ description: 'Base32 secret, shown this once' }),
    otpauth_uri: Type.String({ description: 'otpauth://totp/... for a QR code' }),
    qr_svg: Type.String({ description: 'The QR code of otpauth_uri as an SVG document, to show to the admin as it is (it holds the secret too)' }),
  },
  { description: 'An unconfirmed TOTP factor; confirm it with a first code' },
);

export const FactorConfirmed = Type.Object(
  {
    factor_id: Type.String(),
    recovery_codes: Type.Union([recoveryCodes, Type.Null()], { description: 'With the first factor only, else null' }),
    access_token: Type.Optional(Type.String({ description: 'Only when enrolled with an mfa_token: the session starts (the fields of the login answer)' })),
    expires_in: Type.Optional(Type.Integer()),
    school_id: Type.Optional(Type.String()),
    username: Type.Optional(Type.String()),
    token_type: Type.Optional(Type.Literal('bearer')),
    refresh_token: Type.Optional(Type.String()),
    refresh_expires_in: Type.Optional(Type.Integer()),
  },
  { description: 'The factor is confirmed' },
);

export const FactorList = Type.Object(
  {
    factors: Type.Array(
      Type.Object({
        factor_id: Type.String(),
        type: Type.String({ description: '`totp` or `webauthn`' }),
        name: Type.String(),
        created_at: Type.String({ description: 'ISO 8601 UTC' }),
        last_used_at: Type.Union([Type.String(), Type.Null()]),
        discoverable: Type.Union([Type.Boolean(), Type.Null()], {
          description: 'Passkeys: true when it can sign in alone (POST /admin/auth/passkey/login), false when not; null when unknown, and for TOTP',
        }),
      }),
    ),
    recovery_codes_left: Type.Integer(),
  },
  { description: "The admin's confirmed second factors" },
);

export const RecoveryCodes = Type.Object({ recovery_codes: recoveryCodes }, { description: 'A new set; the previous one stops working' });

export const MfaErrorBodies = {
  invalidFactor: Type.Object(
    { detail: Type.String({ examples: ['Invalid second factor', 'Invalid or expired mfa_token'] }) },
    {
      description:
        '"Invalid second factor": wrong code, or a code already used (try again); ' +
        '"Invalid or expired mfa_token": unknown, expired, used, or dead after 5 wrong codes (sign in again)',
    },
  ),
  stepUp: errorBody(
    'Bearer token missing or invalid, or (WWW-Authenticate error="insufficient_user_authentication") signed in without a second factor, or (with max_age) not presented one within the last 15 minutes',
    'This operation needs a session signed in with a second factor',
  ),
  locked: errorBody('100 consecutive failed second factors: locked until `school-auth admin mfa reset`', 'Second factor locked; an operator must reset it'),
  throttled: errorBody('10 failed second factors in 15 minutes; header Retry-After (seconds)', 'Too many failed second factors. Try again later.'),
  notEnrolled: errorBody('The admin has no confirmed second factor', 'No second factor enrolled'),
  notFound: errorBody('No such factor of this admin', 'Not Found'),
};
