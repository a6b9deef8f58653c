import type { EmailEntry } from '../../db/queries/admin-emails.js';
import { UsageError } from '../../errors.js';
import { emailAddress } from '../accounts/admin-email.js';
import { MAX_USERNAME_LENGTH } from '../accounts/admins.js';
import { checkIdentifier } from '../accounts/schools.js';
import type { RequestContext } from '../events.js';
import { badRequest } from './scim-error.js';
import type { ScimClient } from './scim-tokens.js';
import type { UserInput } from './user-input.js';

/** Who acts: the SCIM token (named in every audit event as `by`) and the request it came with. */
export interface ScimActor {
  readonly client: ScimClient;
  readonly context: RequestContext;
  /** `by SCIM token <id>`. */
  readonly by: string;
}

export function scimActor(client: ScimClient, context: RequestContext): ScimActor {
  return { client, context, by: `by SCIM token ${client.tokenId}` };
}

/** A userName is a username: the same rules as `admin add`. */
export function checkUserName(userName: string): void {
  const problem = checkIdentifier(userName, 'userName', MAX_USERNAME_LENGTH);
  if (problem !== undefined) throw badRequest('invalidValue', problem);
}

type Email = { readonly value?: unknown; readonly type?: unknown; readonly primary?: unknown };

function emailsOf(input: UserInput): readonly Email[] {
  return (input.profile.emails as Email[] | undefined) ?? [];
}

function storedAddress(value: unknown): string {
  try {
    return emailAddress(typeof value === 'string' ? value : '', 'emails.value');
  } catch (error) {
    if (error instanceof UsageError) throw badRequest('invalidValue', error.message);
    throw error;
  }
}

/** The directory's addresses as the admin's notification addresses are stored, with their labels; a value that is none is a 400. */
export function directoryAddresses(input: UserInput): EmailEntry[] {
  return emailsOf(input).map((email) => ({ address: storedAddress(email.value), type: typeof email.type === 'string' ? email.type.toLowerCase() : null }));
}

/** The address that links single sign-on: the primary one, else the first work address, else the first. */
export function linkingAddress(input: UserInput): string | undefined {
  const emails = emailsOf(input);
  const chosen = emails.find((email) => email.primary === true) ?? emails.find((email) => email.type === 'work') ?? emails[0];
  return chosen === undefined ? undefined : storedAddress(chosen.value);
}
