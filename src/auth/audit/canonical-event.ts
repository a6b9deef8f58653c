import { createHash } from 'node:crypto';
import type { AuditEvent } from '../../db/queries/events.js';

/** The hash before the first sealed event: 64 zeros. */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * The fields a seal covers, named here rather than taken from the row, so a column added to
 * `events` later does not silently change what old hashes mean. Events written since migration
 * 018 seal their personal fields (username, ip, user_agent, detail) through `personal`, their
 * digest (db/event-digest.ts), so that erasing them leaves the chain whole; older events seal
 * the fields themselves, as they always did.
 */
const SEALED_FIELDS = ['id', 'seq', 'at', 'type', 'school_id', 'username', 'admin_id', 'session_id', 'ip', 'user_agent', 'detail'] as const;
const SEALED_FIELDS_DIGESTED = ['id', 'seq', 'at', 'type', 'school_id', 'admin_id', 'session_id', 'personal'] as const;

type SealedValue = string | number | null;
type SealedEvent = Readonly<Record<string, SealedValue>>;

/** The event as the chain sees it, once it has a sequence number. */
export function sealedView(event: AuditEvent, seq: number): SealedEvent {
  const common = { id: event.id, seq, at: event.at, type: event.type, school_id: event.school_id, admin_id: event.admin_id, session_id: event.session_id };
  if (event.personal_digest !== null) return { ...common, personal: event.personal_digest };
  return { ...common, username: event.username, ip: event.ip, user_agent: event.user_agent, detail: event.detail };
}

/**
 * The canonical form (docs/audit-trail.md): JSON with keys in code-point order, no whitespace,
 * strings as JSON.stringify writes them. Python's `json.dumps(event, sort_keys=True,
 * separators=(',', ':'), ensure_ascii=False)` gives the same text, so anyone can re-check.
 */
function canonicalJson(event: SealedEvent): string {
  const fields: readonly string[] = 'personal' in event ? SEALED_FIELDS_DIGESTED : SEALED_FIELDS;
  const sorted = [...fields].sort();
  return `{${sorted.map((key) => `${JSON.stringify(key)}:${JSON.stringify(event[key] ?? null)}`).join(',')}}`;
}

/** hash = hex(SHA-256(previous hash in hex || canonical JSON)), over UTF-8. */
export function chainHash(previousHash: string, event: SealedEvent): string {
  return createHash('sha256').update(previousHash).update(canonicalJson(event)).digest('hex');
}
