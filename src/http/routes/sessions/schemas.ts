import { Type } from '@sinclair/typebox';
import { LIMITS, errorBody } from '../schemas.js';

/** Schemas of the self-service endpoints and of the revocation feed. */

const isoTime = (description: string) => Type.String({ format: 'date-time', description: `${description} (ISO 8601, UTC)` });

export const SessionsResponse = Type.Object(
  {
    sessions: Type.Array(
      Type.Object({
        session_id: Type.String({ description: 'The `sid` of the access tokens of this session' }),
        created_at: isoTime('Sign-in time'),
        last_used_at: isoTime('Last sign-in or refresh, written at most once a minute'),
        ip: Type.Union([Type.String(), Type.Null()], { description: 'Client IP at sign-in' }),
        user_agent: Type.Union([Type.String(), Type.Null()], { description: 'User-Agent at sign-in' }),
        acr: Type.String({ description: 'Assurance level: aal1 (password only) or aal2 (with a second factor)', examples: ['aal1', 'aal2'] }),
        amr: Type.Array(Type.String(), { description: 'How the session signed in (RFC 8176): pwd, or fed (single sign-on), and otp/hwk/mfa with a second factor' }),
        current: Type.Boolean({ description: 'True for the session of the presented token' }),
      }),
    ),
  },
  { description: "The admin's live sessions, newest first" },
);

export const SessionIdParams = Type.Object({ session_id: Type.String({ maxLength: 128, description: 'From GET /admin/auth/sessions' }) });

export const PasswordChangeBody = Type.Object({
  current_password: Type.String({ maxLength: LIMITS.password, description: 'The password in use now', format: 'password' }),
  new_password: Type.String({
    maxLength: LIMITS.password,
    description: 'At least 12 characters, not the username or the school id (the rules of the CLI)',
    format: 'password',
  }),
});

export const RevocationsQuery = Type.Object({
  since: Type.Optional(Type.String({ maxLength: 512, description: 'The cursor of a previous answer: only sessions ended after it' })),
});

export const RevocationsResponse = Type.Object(
  {
    sids: Type.Array(Type.String(), { description: 'Session ids (`sid` claims) whose access tokens must be refused' }),
    cursor: Type.String({ description: 'Opaque; pass it as `since` on the next request' }),
    has_more: Type.Boolean({ description: 'True when this answer is one page of more (at most 1000 sids each): ask again at once with `since=cursor`' }),
  },
  { description: 'Sessions ended within the longest access-token lifetime, in the order they ended; headers ETag and Cache-Control' },
);

export const SessionErrorBodies = {
  sessionNotFound: errorBody('No such live session of this admin (also for the sessions of other admins)', 'Not Found'),
  incorrectPassword: errorBody(
    'The current password is wrong (counts as a failed login): "Incorrect password"; or the bearer token is missing, invalid ' +
      'or of an ended session: "Could not validate credentials". Header WWW-Authenticate: Bearer',
    'Incorrect password',
  ),
  invalidCursor: errorBody('`since` is not a cursor this service gave out', 'Invalid cursor'),
};
