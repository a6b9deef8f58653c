import { Type } from '@sinclair/typebox';
import { errorBody } from '../schemas.js';
import { SecondFactorRequired } from '../mfa/schemas.js';

/** Length limits of the code exchange: beyond them a 422 `string_too_long`. */
const SSO_LIMITS = { code: 128, code_verifier: 128 } as const;

export const SsoStartParams = Type.Object({ school_id: Type.String({ description: 'The school whose IdP signs in' }) });

export const SsoStartQuery = Type.Object({
  redirect_uri: Type.String({ description: 'The front-end page to return to: exactly one of SSO_REDIRECT_URIS' }),
  code_challenge: Type.String({ description: "The front end's PKCE challenge: BASE64URL(SHA-256(code_verifier)), 43 characters" }),
  code_challenge_method: Type.Optional(Type.Literal('S256')),
});

export const SsoCallbackQuery = Type.Object({
  state: Type.Optional(Type.String()),
  code: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
  iss: Type.Optional(Type.String()),
});

export const SsoTokenBody = Type.Object({
  code: Type.String({ maxLength: SSO_LIMITS.code, description: 'The `code` the callback added to redirect_uri', format: 'password' }),
  code_verifier: Type.String({ maxLength: SSO_LIMITS.code_verifier, description: 'The PKCE verifier whose challenge started the sign-in', format: 'password' }),
});

const redirect = (description: string) => ({
  type: 'null',
  description,
  headers: { location: { schema: { type: 'string' }, description: 'Where the browser goes next' } },
});

export const SsoRedirects = {
  toIdp: redirect(
    'To the IdP (state, nonce, PKCE S256); or, when the IdP cannot be reached, to redirect_uri?error=temporarily_unavailable&error_description=...',
  ),
  toFrontEnd: redirect(
    'To redirect_uri?code=<login code> (60 s, single use, bound to code_challenge); or redirect_uri?error=access_denied (refused: not linked, ' +
      'wrong domain/tenant/district, unverified email, disabled, ...) or error=temporarily_unavailable (IdP down, slow or wrong), each with error_description',
  ),
};

export const SsoErrorBodies = {
  badRedirect: Type.Object(
    { detail: Type.String({ examples: ['redirect_uri is not one of the registered front-end addresses', 'code_challenge must be a PKCE S256 challenge (43 base64url characters)'] }) },
    { description: 'redirect_uri not exactly one of SSO_REDIRECT_URIS (never redirected to), or no S256 code_challenge' },
  ),
  notSetUp: errorBody('Unknown school, or no single sign-on set up for it', 'Single sign-on is not set up for this school'),
  badState: errorBody('state missing, altered, expired or already used: start the sign-in again', 'This sign-in has expired or was already used: start again'),
  throttled: errorBody('Too many failed callbacks from this address; header Retry-After (seconds)', 'Too many failed sign-ins. Try again later.'),
  invalidCode: errorBody('Login code unknown, expired, used, or code_verifier does not match', 'Invalid or expired sign-in code'),
  badLogoutToken: errorBody('logout_token missing, not signed by the school IdP for our client, too old, or not a logout token', 'Invalid logout token'),
  passwordOff: errorBody('The school signs in only through its identity provider', 'Password sign-in is turned off for this school'),
};

/** The login's 403: our second factor is asked for, or the school signs in only through its IdP. */
export const LoginForbidden = Type.Object(
  {
    detail: Type.Union([
      Type.Literal('Second factor required'),
      Type.Literal('Second factor enrollment required'),
      Type.Literal('Password sign-in is turned off for this school'),
    ]),
    mfa_token: Type.Optional(SecondFactorRequired.properties.mfa_token),
    mfa_methods: Type.Optional(SecondFactorRequired.properties.mfa_methods),
    expires_in: Type.Optional(SecondFactorRequired.properties.expires_in),
  },
  {
    description:
      'Right password, second factor needed (mfa_token, mfa_methods, expires_in: verify it, or enroll with mfa_methods empty); ' +
      'or, with the detail alone, password sign-in is off for this school (sso set --password-login off): sign in through its IdP',
  },
);
