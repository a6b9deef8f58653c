import { emailsOfAdmins, findScimAdmin, listScimAdmins } from '../../db/queries/scim-admins.js';
import type { AppContext } from '../context.js';
import { parseFilter } from './filter-parse.js';
import { ScimError } from './scim-error.js';
import type { ScimClient } from './scim-tokens.js';
import { adminFilter } from './user-filter.js';
import { userResource } from './user-resource.js';

type Deps = Pick<AppContext, 'db'>;

/** The most resources one page holds (ServiceProviderConfig's `filter.maxResults`); a larger `count` gets this many. */
export const MAX_PAGE = 200;

export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

export interface ListQuery {
  readonly filter?: string;
  /** 1-based, as SCIM counts; below 1 means 1. */
  readonly startIndex?: number;
  readonly count?: number;
}

export async function getUser(deps: Deps, client: ScimClient, id: string, base: string): Promise<Record<string, unknown>> {
  const row = await findScimAdmin(deps.db, client.schoolKey, id);
  if (row === undefined) throw new ScimError(404, undefined, `User ${id} not found`);
  const addresses = await emailsOfAdmins(deps.db, [row.id]);
  return userResource(row, addresses.get(row.id) ?? [], base);
}

/** One page of the school's admins matching the filter (RFC 7644 §3.4.2), in creation order. */
export async function listUsers(deps: Deps, client: ScimClient, query: ListQuery, base: string): Promise<Record<string, unknown>> {
  const condition = adminFilter(query.filter === undefined ? undefined : parseFilter(query.filter));
  const startIndex = Math.max(1, query.startIndex ?? 1);
  const count = Math.min(MAX_PAGE, Math.max(0, query.count ?? MAX_PAGE));
  const { total, rows } = await listScimAdmins(deps.db, client.schoolKey, condition, startIndex - 1, count);
  const addresses = await emailsOfAdmins(
    deps.db,
    rows.map((row) => row.id),
  );
  return {
    schemas: [LIST_SCHEMA],
    totalResults: total,
    startIndex,
    itemsPerPage: rows.length,
    Resources: rows.map((row) => userResource(row, addresses.get(row.id) ?? [], base)),
  };
}
