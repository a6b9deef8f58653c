import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import { insertEvent } from '../db/queries/events.js';

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
  | 'keys.rotated'
  | 'keys.revoked';

/** Who did it and from where: the request context of an audited action. */
export interface RequestContext {
  readonly ip: string | null;
  readonly userAgent: string | null;
}

export const CLI_CONTEXT: RequestContext = { ip: null, userAgent: 'school-auth-cli' };

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

/** Appends to the audit trail. `schoolId` is the canonical school key, so filters match it. */
export async function recordEvent(db: Db, clock: Clock, context: RequestContext, entry: AuditEntry): Promise<void> {
  await insertEvent(db, {
    at: clock.now(),
    type: entry.type,
    school_id: entry.schoolId ?? null,
    username: entry.username ?? null,
    admin_id: entry.adminId ?? null,
    session_id: entry.sessionId ?? null,
    ip: context.ip,
    user_agent: context.userAgent === null ? null : context.userAgent.slice(0, 512),
    detail: entry.detail ?? null,
  });
}
