import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { DatabaseSchema } from '../schema/index.js';

/**
 * A condition on admins in the columns' own terms, translated from a SCIM filter by auth/scim
 * (which has already canonicalized usernames and turned times into epoch seconds).
 */
export type AdminColumn = 'id' | 'username_key' | 'external_id' | 'created_at' | 'last_modified';
export type ColumnOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le' | 'pr';

export type AdminFilter =
  | { readonly kind: 'and' | 'or'; readonly left: AdminFilter; readonly right: AdminFilter }
  | { readonly kind: 'not'; readonly filter: AdminFilter }
  | { readonly kind: 'constant'; readonly value: boolean }
  | { readonly kind: 'column'; readonly column: AdminColumn; readonly op: ColumnOp; readonly value: string | number | null }
  | { readonly kind: 'active'; readonly active: boolean }
  | { readonly kind: 'email'; readonly op: 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'pr'; readonly value: string | null };

type Eb = ExpressionBuilder<DatabaseSchema, 'admins'>;

const COMPARE = { eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' } as const;

/** `value` inside a LIKE pattern, its wildcards taken literally (the escape character is `\`). */
function likePattern(op: 'co' | 'sw' | 'ew', value: string): string {
  const literal = value.replace(/[\\%_]/g, (character) => `\\${character}`);
  return op === 'co' ? `%${literal}%` : op === 'sw' ? `${literal}%` : `%${literal}`;
}

function columnOf(eb: Eb, column: AdminColumn) {
  if (column === 'last_modified') return eb.fn.coalesce('admins.modified_at', 'admins.created_at');
  return eb.ref(`admins.${column}`);
}

function columnCondition(eb: Eb, filter: Extract<AdminFilter, { kind: 'column' }>): Expression<SqlBool> {
  const column = columnOf(eb, filter.column);
  if (filter.op === 'pr') return eb(column, 'is not', null);
  if (filter.value === null) return filter.op === 'ne' ? eb(column, 'is not', null) : eb(column, 'is', null);
  if (filter.op === 'co' || filter.op === 'sw' || filter.op === 'ew') {
    return sql<SqlBool>`${column} like ${likePattern(filter.op, String(filter.value))} escape '\\'`;
  }
  return eb(column, COMPARE[filter.op], filter.value);
}

/** Whether one of the admin's addresses matches, compared without case (the index is on lower(address)). */
function emailCondition(eb: Eb, filter: Extract<AdminFilter, { kind: 'email' }>): Expression<SqlBool> {
  const addresses = eb.selectFrom('admin_emails').select('admin_emails.admin_id').whereRef('admin_emails.admin_id', '=', 'admins.id');
  // `pr` and `ne null`: the admin has an address; `eq null`: none.
  if (filter.op === 'pr') return eb.exists(addresses);
  if (filter.value === null) return filter.op === 'ne' ? eb.exists(addresses) : eb.not(eb.exists(addresses));
  const lowered = sql<string>`lower(admin_emails.address)`;
  const value = String(filter.value);
  // `id in (...)`, not a correlated `exists`: SQLite plans that as a scan of every admin, each probed for the address.
  if (filter.op === 'eq') return eb('admins.id', 'in', eb.selectFrom('admin_emails').select('admin_emails.admin_id').where(lowered, '=', sql<string>`lower(${value})`));
  if (filter.op === 'ne') return eb.not(eb.exists(addresses.where(lowered, '=', sql<string>`lower(${value})`)));
  return eb.exists(addresses.where(sql<SqlBool>`${lowered} like lower(${likePattern(filter.op, value)}) escape '\\'`));
}

/** The SQL condition for `filter`, over the `admins` table. */
export function adminCondition(eb: Eb, filter: AdminFilter): Expression<SqlBool> {
  switch (filter.kind) {
    case 'and':
      return eb.and([adminCondition(eb, filter.left), adminCondition(eb, filter.right)]);
    case 'or':
      return eb.or([adminCondition(eb, filter.left), adminCondition(eb, filter.right)]);
    case 'not':
      return eb.not(adminCondition(eb, filter.filter));
    case 'constant':
      return sql<SqlBool>`${sql.lit(filter.value ? 1 : 0)} = 1`;
    case 'active':
      return eb('admins.disabled_at', filter.active ? 'is' : 'is not', null);
    case 'email':
      return emailCondition(eb, filter);
    case 'column':
      return columnCondition(eb, filter);
  }
}
