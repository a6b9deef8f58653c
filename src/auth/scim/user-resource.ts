import type { ScimAdminRow } from '../../db/queries/scim-admins.js';
import { ENTERPRISE_SCHEMA, USER_SCHEMA } from './user-schema.js';

/** An admin as a SCIM User (RFC 7643 §4.1), as GET answers it; `base` is `<PUBLIC_URL>/scim/v2`. */
export function userResource(row: ScimAdminRow, addresses: readonly string[], base: string): Record<string, unknown> {
  const profile = row.scim_profile === null ? {} : (JSON.parse(row.scim_profile) as Record<string, unknown>);
  const schemas = ENTERPRISE_SCHEMA in profile ? [USER_SCHEMA, ENTERPRISE_SCHEMA] : [USER_SCHEMA];
  // An admin the directory never described still shows the addresses an operator or the IdP gave.
  const emails = profile.emails ?? (addresses.length === 0 ? undefined : addresses.map((value, index) => ({ value, type: 'work', primary: index === 0 })));
  const modified = row.modified_at ?? row.created_at;
  return {
    schemas,
    id: row.id,
    ...(row.external_id === null ? {} : { externalId: row.external_id }),
    userName: row.username,
    ...profile,
    ...(emails === undefined ? {} : { emails }),
    active: row.disabled_at === null,
    meta: {
      resourceType: 'User',
      created: new Date(row.created_at * 1000).toISOString(),
      lastModified: new Date(modified * 1000).toISOString(),
      location: `${base}/Users/${row.id}`,
    },
  };
}
