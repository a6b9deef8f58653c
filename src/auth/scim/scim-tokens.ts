import { hash, randomUUID } from 'node:crypto';
import { nowSeconds } from '../../runtime/clock.js';
import { deleteScimToken, findScimToken, insertScimToken, listScimTokens, touchScimToken, type ScimTokenListing } from '../../db/queries/scim-tokens.js';
import { UsageError } from '../../errors.js';
import type { AppContext } from '../context.js';
import { CLI_CONTEXT, recordEvent } from '../events.js';
import { secureRandomBytes } from '../secure-random.js';
import { requireSchool } from '../accounts/schools.js';

type Deps = Pick<AppContext, 'db' | 'clock'>;

/** Who a SCIM request acts as: one token, on its own school only. */
export interface ScimClient {
  readonly tokenId: string;
  readonly schoolKey: string;
  readonly schoolId: string;
}

const PREFIX = 'scim_';

function digest(token: string): string {
  return hash('sha256', `school-auth scim token\0${token}`, 'hex');
}

/** A new bearer token for the school's directory: 256 random bits, shown once, stored as a digest. */
export async function createScimToken(deps: Deps, schoolId: string, label: string | undefined): Promise<{ id: string; token: string }> {
  const school = await requireSchool(deps.db, schoolId);
  if (label !== undefined && (label.length === 0 || label.length > 100)) throw new UsageError('--label: 1 to 100 characters');
  const token = `${PREFIX}${secureRandomBytes(32).toString('base64url')}`;
  const id = randomUUID();
  await deps.db.transaction().execute(async (trx) => {
    await insertScimToken(trx, { id, school_key: school.key, token_hash: digest(token), label: label ?? null, created_at: nowSeconds(deps.clock) });
    await recordEvent(trx, deps.clock, CLI_CONTEXT, { type: 'scim.token_created', schoolId: school.key, detail: `token ${id}${label === undefined ? '' : ` (${label})`}` });
  });
  return { id, token };
}

export async function listTokens(deps: Deps, schoolId: string | undefined): Promise<ScimTokenListing[]> {
  const school = schoolId === undefined ? undefined : await requireSchool(deps.db, schoolId);
  return listScimTokens(deps.db, school?.key);
}

/** Revokes a token at once: the next request presenting it is refused. */
export async function revokeScimToken(deps: Deps, id: string): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const revoked = await deleteScimToken(trx, id);
    if (revoked === undefined) throw new UsageError(`SCIM token ${JSON.stringify(id)} does not exist; see: school-auth scim token list`);
    await recordEvent(trx, deps.clock, CLI_CONTEXT, { type: 'scim.token_revoked', schoolId: revoked.school_key, detail: `token ${id}` });
  });
}

/** The client a presented bearer token stands for, or undefined when it is none of ours. */
export async function authenticateScimToken(deps: Deps, presented: string): Promise<ScimClient | undefined> {
  if (!presented.startsWith(PREFIX) || presented.length > 100) return undefined;
  const token = await findScimToken(deps.db, digest(presented));
  if (token === undefined) return undefined;
  await touchScimToken(deps.db, token.id, nowSeconds(deps.clock));
  return { tokenId: token.id, schoolKey: token.school_key, schoolId: token.school_id };
}
