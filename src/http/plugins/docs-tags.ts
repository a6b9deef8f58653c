/**
 * The groups /docs shows the operations in, in this order. Every route of the public port names
 * exactly one of them: an untagged operation would land in Swagger UI's "default" group.
 */
export const TAG = {
  signIn: 'sign-in and tokens',
  sessions: 'sessions',
  mfa: 'second factor',
  keys: 'keys',
  operations: 'operations',
} as const;

export const OPENAPI_TAGS = [
  {
    name: TAG.signIn,
    description:
      'Sign in with a school id, a username and a password; exchange the refresh token for new access tokens; sign out. ' +
      'The two operations of the original contract are here.',
  },
  {
    name: TAG.sessions,
    description:
      'What a bearer access token stands for, checked against its session; your own sessions and password (Authorize with the access token).',
  },
  {
    name: TAG.mfa,
    description:
      'Second factors of administrators: answer the 403 of a login with a TOTP or recovery code; enroll, list and remove factors; ' +
      'renew recovery codes. Once an admin has a factor, changing factors needs an access token signed in with one (acr aal2).',
  },
  {
    name: TAG.keys,
    description: 'The public keys that verify access tokens, and the sessions whose tokens must be refused, for the platform’s other services.',
  },
  {
    name: TAG.operations,
    description: 'Liveness and readiness for load balancers. Metrics are served on the management listener (MANAGEMENT_PORT), not here.',
  },
];
