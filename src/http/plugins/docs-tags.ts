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
  scim: 'directory provisioning (SCIM 2.0)',
} as const;

/** What each group is for, said as the people who build the admin pages and services would ask it. */
export const OPENAPI_TAGS = [
  {
    name: TAG.signIn,
    description:
      'Let an administrator sign in with their school, username and password; keep them signed in with the refresh token; sign them out.',
  },
  {
    name: TAG.sessions,
    description:
      'Who is signed in with this access token; the devices an administrator is signed in on, and ending them; changing their own password. ' +
      'Use "Authorize" with an access token first.',
  },
  {
    name: TAG.mfa,
    description:
      'A second step after the password: a code from an authenticator app, a passkey or a recovery code. ' +
      'Add or remove an app or a passkey and get new recovery codes; once an administrator has one, these changes need a sign-in that used it.',
  },
  {
    name: TAG.keys,
    description: 'For your other services: the public keys that check access tokens, and the sessions that were ended, whose tokens to refuse.',
  },
  {
    name: TAG.operations,
    description: 'For load balancers and monitoring: is the service up, and ready to answer. Metrics are on the management port (MANAGEMENT_PORT), not here.',
  },
  {
    name: TAG.scim,
    description:
      "For the district's directory (Microsoft Entra ID, Okta): create, update, deactivate and delete a school's administrators. " +
      'Authorize with a SCIM token from `school-auth scim token create`; answers and errors are SCIM\'s own (RFC 7644). See docs/scim.md.',
  },
];
