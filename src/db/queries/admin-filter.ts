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
  /** One of the admin's addresses matches; with `type`, an address of that label (null, not said, is `work`). */
  | { readonly kind: 'email'; readonly op: 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'pr'; readonly value: string | null; readonly type?: string };

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

/**
 * `co`, `sw`, `ew` as LIKE (its index where there is one), then the same test without case folding:
 * SQLite's LIKE ignores the case of ASCII letters, and id and externalId are case-exact.
 */
function substringCondition(column: Expression<unknown>, op: 'co' | 'sw' | 'ew', value: string): Expression<SqlBool> {
  const like = sql<SqlBool>`${column} like ${likePattern(op, value)} escape '\\'`;
  if (value === '') return like;
  // Both count characters (code points), as the spread does.
  const length = [...value].length;
  if (op === 'sw') return sql<SqlBool>`(${like} and substr(${column}, 1, ${length}) = ${value})`;
  if (op === 'ew') return sql<SqlBool>`(${like} and substr(${column}, length(${column}) - ${length} + 1) = ${value})`;
  // replace() removes `value` where it occurs, case-exact, in SQLite and PostgreSQL alike.
  return sql<SqlBool>`(${like} and replace(${column}, ${value}, '') <> ${column})`;
}

function columnCondition(eb: Eb, filter: Extract<AdminFilter, { kind: 'column' }>): Expression<SqlBool> {
  const column = columnOf(eb, filter.column);
  if (filter.op === 'pr') return eb(column, 'is not', null);
  if (filter.value === null) return filter.op === 'ne' ? eb(column, 'is not', null) : eb(column, 'is', null);
  const compared = filter.op === 'co' || filter.op === 'sw' || filter.op === 'ew' ? substringCondition(column, filter.op, String(filter.value)) : eb(column, COMPARE[filter.op], filter.value);
  if (filter.column !== 'external_id') return compared;
  // An admin without an external id: SQL's comparison with null is unknown, and so is its not(). SCIM
  // has no third value: `ne` matches the absent value, the other operators do not, and not() inverts.
  return filter.op === 'ne' ? eb.or([eb(column, 'is', null), compared]) : eb.and([eb(column, 'is not', null), compared]);
}

/** Whether one of the admin's addresses matches, compared without case (the index is on lower(address)). */
function emailCondition(eb: Eb, filter: Extract<AdminFilter, { kind: 'email' }>): Expression<SqlBool> {
  const typed = eb
    .selectFrom('admin_emails')
    .select('admin_emails.admin_id')
    .where((inner) => (filter.type === undefined ? sql<SqlBool>`1 = 1` : inner(sql<string>`coalesce(lower(admin_emails.type), 'work')`, '=', filter.type.toLowerCase())));
  const addresses = typed.whereRef('admin_emails.admin_id', '=', 'admins.id');
  // `pr` and `ne null`: the admin has an address; `eq null`: none.
  if (filter.op === 'pr') return eb.exists(addresses);
  if (filter.value === null) return filter.op === 'ne' ? eb.exists(addresses) : eb.not(eb.exists(addresses));
  const lowered = sql<string>`lower(admin_emails.address)`;
  const value = String(filter.value);
  // `id in (...)`, not a correlated `exists`: SQLite plans that as a scan of every admin, each probed for the address.
  if (filter.op === 'eq') return eb('admins.id', 'in', typed.where(lowered, '=', sql<string>`lower(${value})`));
  // `ne`, like every operator on a multi-valued attribute, matches when one of the addresses does (RFC 7644 §3.4.2.2).
  if (filter.op === 'ne') return eb.exists(addresses.where(lowered, '<>', sql<string>`lower(${value})`));
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
