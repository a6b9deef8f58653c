import { nowSeconds } from '../../runtime/clock.js';
import { inTransaction } from '../../db/database.js';
import { advanceCredentialEpoch, findAdminById } from '../../db/queries/admins.js';
import { revokeSessions, type RevokeScope } from '../../db/queries/session-ending.js';
import { aboutAdmin, recordEvent, type AuditEntry, type EventType, type RequestContext } from '../events.js';
import type { AppContext } from '../context.js';

/** Who an audit event is about. */
type AuditSubject = Pick<AuditEntry, 'schoolId' | 'username' | 'adminId'>;

export interface SessionEnding {
  /** Which sessions: one, an admin's, a school's, a refresh token's, an IdP identity's or issuer's. */
  readonly scope: RevokeScope;
  /** Stored on every ended session (`revoke_reason`). */
  readonly reason: string;
  /**
   * Also moves the credential epoch of the admin (or of the school's admins) on, so a session still
   * being created by a login that checked the password before this cannot start afterwards.
   */
  readonly moveEpoch?: boolean;
  readonly audit: {
    readonly context: RequestContext;
    readonly type: EventType;
    /** Who the event is about; by default the one admin whose sessions ended. */
    readonly about?: AuditSubject;
    /** The session the event names; by default the one ended, when the scope is one session. */
    readonly sessionId?: string | null;
    readonly detail?: (ended: number) => string | null;
    /** Recorded even when no session ended: an operator's action is recorded whatever it found. */
    readonly always?: boolean;
  };
}

export type EndedSession = { readonly id: string; readonly admin_id: string };

type Deps = Pick<AppContext, 'db' | 'clock'>;

function isOneSession(scope: RevokeScope): boolean {
  return 'sessionId' in scope || 'refreshTokenHash' in scope;
}

/** Whose credential epoch an ending of all of an admin's or a school's sessions moves. */
function epochScope(scope: RevokeScope): { adminId: string } | { schoolKey: string } | undefined {
  if ('schoolKey' in scope) return scope.acr === undefined ? { schoolKey: scope.schoolKey } : undefined;
  if ('adminId' in scope && !('sessionId' in scope) && scope.adminId !== undefined) return { adminId: scope.adminId };
  return undefined;
}

/** The admin every ended session belonged to, when there is exactly one. */
async function ownerOf(deps: Deps, ended: readonly EndedSession[]): Promise<AuditSubject> {
  const owners = new Set(ended.map((session) => session.admin_id));
  const [adminId] = owners;
  if (owners.size !== 1 || adminId === undefined) return {};
  const admin = await findAdminById(deps.db, adminId);
  return admin === undefined ? { adminId } : aboutAdmin(admin);
}

/**
 * The one way sessions end. In one transaction (the caller's, when it passes one as `deps.db`):
 * every live session in the scope is revoked and stamped with its position in the revocation feed
 * by one statement, whose RETURNING says which ended and whose they were, and the audit event that
 * records it is written. So no session ends without its event, and no event claims an ending that
 * did not commit.
 */
export function endSessions(deps: Deps, ending: SessionEnding): Promise<EndedSession[]> {
  return inTransaction(deps.db, async (trx) => {
    const inside = { ...deps, db: trx };
    const { scope, audit } = ending;
    const owners = epochScope(scope);
    if (ending.moveEpoch === true && owners !== undefined) await advanceCredentialEpoch(trx, owners);
    const ended = await revokeSessions(trx, scope, ending.reason, nowSeconds(deps.clock));
    if (ended.length === 0 && audit.always !== true) return ended;
    const about = audit.about ?? (await ownerOf(inside, ended));
    const [only] = ended;
    const sessionId = audit.sessionId !== undefined ? audit.sessionId : isOneSession(scope) ? (only?.id ?? null) : null;
    await recordEvent(trx, deps.clock, audit.context, { type: audit.type, ...about, sessionId, detail: audit.detail?.(ended.length) ?? null });
    return ended;
  });
}
