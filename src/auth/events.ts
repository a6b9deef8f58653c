import { userInfo } from 'node:os';
import type { Clock } from '../runtime/clock.js';
import type { Db } from '../db/database.js';
import { insertEvent } from '../db/queries/events.js';
import { enqueueNotifications } from './notifications.js';
import { secureRandomBytes } from './secure-random.js';

export type EventType =
  | 'login.success'
  | 'login.failure'
  | 'login.throttled'
  | 'account.locked'
  | 'admin.unlocked'
  | 'refresh.reuse'
  | 'logout'
  | 'session.revoked'
  | 'admin.created'
  | 'admin.password_changed'
  | 'admin.disabled'
  | 'admin.enabled'
  | 'school.created'
  | 'school.suspended'
  | 'school.resumed'
  | 'keys.created'
  | 'keys.rotated'
  | 'keys.revoked'
  | 'keys.encrypted'
  | 'mfa.challenged'
  | 'mfa.success'
  | 'mfa.failure'
  | 'mfa.throttled'
  | 'mfa.locked'
  | 'mfa.enrolled'
  | 'mfa.removed'
  | 'mfa.recovery_codes_renewed'
  | 'mfa.reset'
  | 'school.mfa_policy'
  | 'school.passkey_policy'
  | 'events.pruned'
  | 'sso.success'
  | 'sso.failure'
  | 'sso.linked'
  | 'sso.unlinked'
  | 'sso.logout'
  | 'sso.configured'
  | 'sso.removed'
  | 'login.new_address'
  | 'mfa.recovery_code_used'
  | 'admin.email_changed'
  | 'webhook.added'
  | 'webhook.removed'
  | 'webhook.secret_rotated'
  | 'outbox.dropped'
  | 'admin.password_recovery_requested'
  | 'admin.password_recovery_failed'
  | 'admin.recovery_link_created'
  | 'school.password_recovery'
  | 'admin.updated'
  | 'admin.deleted'
  | 'admin.erased'
  | 'scim.token_created'
  | 'scim.token_revoked';

/** Who did it and from where: the request context of an audited action. */
export interface RequestContext {
  readonly ip: string | null;
  readonly userAgent: string | null;
}

/**
 * Who ran a command: the CLI has no login of its own, so the operating-system user stands for the
 * operator (the uid when the system has no name for it, as in some containers).
 */
function operatingSystemUser(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid ${process.getuid?.() ?? 'unknown'}`;
  }
}

export const CLI_CONTEXT: RequestContext = { ip: null, userAgent: `school-auth-cli (os user ${operatingSystemUser()})` };

/** What the server does by itself, at start (the first signing key). */
export const SERVER_CONTEXT: RequestContext = { ip: null, userAgent: 'school-auth-server' };

export interface AuditEntry {
  readonly type: EventType;
  readonly schoolId?: string | null;
  readonly username?: string | null;
  readonly adminId?: string | null;
  readonly sessionId?: string | null;
  readonly detail?: string | null;
}

/** The audit fields that name an administrator. */
export function aboutAdmin(admin: { readonly id: string; readonly school_key: string; readonly username: string }) {
  return { schoolId: admin.school_key, username: admin.username, adminId: admin.id };
}

/**
 * The most characters (code points) of client-supplied text an event keeps: the request limits
 * of the login fields, applied again to what is stored, because NFKC can make a school id 18
 * times longer (U+FDFA). Longer text is cut and marked with `…`.
 */
const STORED_TEXT_LIMITS = { schoolId: 128, username: 256, userAgent: 512 } as const;

function bounded(text: string | null | undefined, limit: number): string | null {
  if (text === null || text === undefined) return null;
  const chars = [...text];
  return chars.length <= limit ? text : `${chars.slice(0, limit).join('')}…`;
}

/** Appends to the audit trail. `schoolId` is the canonical school key, so filters match it. */
const recorded = new Set<() => void>();

/** Calls `listener` after each event this process records (the sealer's next round); returns how to stop. */
export function onEventRecorded(listener: () => void): () => void {
  recorded.add(listener);
  return () => void recorded.delete(listener);
}

/**
 * Appends to the audit trail and writes the notifications the event sends (auth/notifications.ts)
 * through the same `db`: inside the caller's transaction, both commit with the change or neither does.
 */
export async function recordEvent(db: Db, clock: Clock, context: RequestContext, entry: AuditEntry): Promise<void> {
  const at = clock.now();
  const stored = {
    school_id: bounded(entry.schoolId, STORED_TEXT_LIMITS.schoolId),
    username: bounded(entry.username, STORED_TEXT_LIMITS.username),
    admin_id: entry.adminId ?? null,
    session_id: entry.sessionId ?? null,
    ip: context.ip,
    user_agent: bounded(context.userAgent, STORED_TEXT_LIMITS.userAgent),
    detail: entry.detail ?? null,
  };
  const erased = await insertEvent(db, { at, type: entry.type, ...stored }, secureRandomBytes(32).toString('hex'));
  // About an admin whose data was erased: the event is stored erased, and its notifications say no more.
  const data = erased ? { ...stored, username: null, ip: null, user_agent: null, detail: null } : stored;
  await enqueueNotifications(db, at, { type: entry.type, timestamp: new Date(at).toISOString(), data });
  for (const listener of recorded) listener();
}
