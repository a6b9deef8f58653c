import { nowSeconds } from '../../runtime/clock.js';
import { endAllSessions, findSession } from '../../db/queries/sessions.js';
import { revokeSessions } from '../../db/queries/session-ending.js';
import { UsageError } from '../../errors.js';
import { requireAdmin, type AdminRef } from '../accounts/admins.js';
import { CLI_CONTEXT, aboutAdmin, recordEvent } from '../audit/events.js';
import type { AppContext } from '../context.js';

type Deps = Pick<AppContext, 'db' | 'clock'>;

/** Revokes one session by id (from `sessions list`). */
export async function revokeSessionById(deps: Deps, sessionId: string): Promise<boolean> {
  const session = await findSession(deps.db, sessionId);
  if (session === undefined) throw new UsageError(`session ${JSON.stringify(sessionId)} does not exist; see: school-auth sessions list --school ID`);
  const revoked = (await revokeSessions(deps.db, { sessionId }, 'revoked', nowSeconds(deps.clock))).length > 0;
  if (revoked) {
    await recordEvent(deps.db, deps.clock, CLI_CONTEXT, {
      type: 'session.revoked',
      schoolId: session.school_key,
      username: session.username,
      adminId: session.admin_id,
      sessionId,
    });
  }
  return revoked;
}

/** Revokes every live session of one admin. */
export async function revokeSessionsOfAdmin(deps: Deps, ref: AdminRef): Promise<number> {
  const admin = await requireAdmin(deps, ref);
  const ended = (await endAllSessions(deps.db, { adminId: admin.id }, 'revoked', nowSeconds(deps.clock))).length;
  await recordEvent(deps.db, deps.clock, CLI_CONTEXT, {
    type: 'session.revoked',
    ...aboutAdmin(admin),
    detail: `${ended} sessions ended`,
  });
  return ended;
}
