import type { AdminColumn, AdminFilter, ColumnOp } from '../../db/queries/admin-filter.js';
import type { FilterValue, ScimFilter } from './scim-filter.js';
import { canonicalKey } from '../identity.js';
import { badRequest } from './scim-error.js';

/** The attributes a list can be filtered by, each answered from a column or an index. */
const COLUMNS: Record<string, AdminColumn> = {
  id: 'id',
  userName: 'username_key',
  externalId: 'external_id',
  'meta.created': 'created_at',
  'meta.lastModified': 'last_modified',
};

const unsupported = (attribute: string) =>
  badRequest('invalidFilter', `filtering by ${attribute} is not supported; filter by id, userName, externalId, emails.value, active, meta.created or meta.lastModified`);

/**
 * A time compared with the whole seconds stored, as the instant it names: a fraction rounds the way
 * that keeps the comparison (created before 5.5 s is created before 6 s) and equals no stored time.
 * co, sw and ew mean nothing for a time: refused (RFC 7644 §3.12, invalidFilter).
 */
function instant(column: 'created_at' | 'last_modified', op: ColumnOp, value: FilterValue, attribute: string): AdminFilter {
  if (op === 'pr') return { kind: 'column', column, op, value: null };
  const at = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at) || op === 'co' || op === 'sw' || op === 'ew') throw badRequest('invalidFilter', `${attribute} is compared with a date and time (RFC 3339) by eq, ne, gt, ge, lt, le, or with pr`);
  if (at % 1000 !== 0 && (op === 'eq' || op === 'ne')) return { kind: 'constant', value: op === 'ne' };
  return { kind: 'column', column, op, value: (op === 'lt' || op === 'ge' ? Math.ceil : Math.floor)(at / 1000) };
}

function compare(filter: Extract<ScimFilter, { kind: 'compare' | 'present' }>): AdminFilter {
  const { attribute } = filter;
  const op = filter.kind === 'present' ? 'pr' : filter.op;
  const value = filter.kind === 'present' ? null : filter.value;
  if (attribute === 'emails.value') {
    if (op === 'gt' || op === 'ge' || op === 'lt' || op === 'le') throw badRequest('invalidFilter', 'emails.value is compared with eq, ne, co, sw, ew or pr');
    return { kind: 'email', op, value: value === null ? null : String(value) };
  }
  if (attribute === 'active') {
    if (op === 'pr') return { kind: 'constant', value: true };
    if ((op !== 'eq' && op !== 'ne') || typeof value !== 'boolean') throw badRequest('invalidFilter', 'active is compared with eq or ne and true or false');
    return { kind: 'active', active: op === 'eq' ? value : !value };
  }
  const column = COLUMNS[attribute];
  if (column === undefined) throw unsupported(attribute);
  // userName is compared without case: as a username is, by its canonical key.
  if (column === 'username_key') return { kind: 'column', column, op, value: value === null ? null : canonicalKey(String(value)) };
  if (column === 'created_at' || column === 'last_modified') return instant(column, op, value, attribute);
  return { kind: 'column', column, op, value: value === null ? null : String(value) };
}

/** A parsed SCIM filter as a condition on the school's admins; an attribute without an index is a 400. */
export function adminFilter(filter: ScimFilter | undefined): AdminFilter {
  if (filter === undefined) return { kind: 'constant', value: true };
  switch (filter.kind) {
    case 'and':
    case 'or':
      return { kind: filter.kind, left: adminFilter(filter.left), right: adminFilter(filter.right) };
    case 'not':
      return { kind: 'not', filter: adminFilter(filter.filter) };
    case 'valuePath':
      // emails[value eq "x"] is emails.value eq "x"; emails[type eq "work" and value eq "x"], one address of that label.
      if (filter.attribute !== 'emails') throw unsupported(filter.attribute);
      return typedEmail(filter.filter) ?? adminFilter(relativeToEmails(filter.filter));
    default:
      return compare(filter);
  }
}

const isTypeEq = (filter: ScimFilter): filter is Extract<ScimFilter, { kind: 'compare' }> & { value: string } =>
  filter.kind === 'compare' && filter.attribute === 'type' && filter.op === 'eq' && typeof filter.value === 'string';

/**
 * `[type eq "work"]`, alone or `and` one comparison of `value` (Microsoft Entra's
 * `emails[type eq "work"].value eq "x"`): both on the same address. Undefined for any other shape.
 */
function typedEmail(filter: ScimFilter): AdminFilter | undefined {
  if (isTypeEq(filter)) return { kind: 'email', op: 'pr', value: null, type: filter.value };
  if (filter.kind !== 'and') return undefined;
  const [type, other] = isTypeEq(filter.left) ? [filter.left, filter.right] : isTypeEq(filter.right) ? [filter.right, filter.left] : [];
  if (type === undefined || other === undefined || (other.kind !== 'compare' && other.kind !== 'present') || other.attribute !== 'value') return undefined;
  const email = compare({ ...other, attribute: 'emails.value' });
  return email.kind === 'email' ? { ...email, type: type.value } : undefined;
}

function relativeToEmails(filter: ScimFilter): ScimFilter {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return { ...filter, left: relativeToEmails(filter.left), right: relativeToEmails(filter.right) };
    case 'not':
      return { ...filter, filter: relativeToEmails(filter.filter) };
    case 'valuePath':
      throw unsupported(`emails.${filter.attribute}`);
    default:
      if (filter.attribute !== 'value') throw unsupported(`emails.${filter.attribute}`);
      return { ...filter, attribute: 'emails.value' };
  }
}
