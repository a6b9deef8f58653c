import { findSession } from '../../db/queries/sessions.js';
import { UsageError } from '../../errors.js';
import { requireAdmin, type AdminRef } from './admins.js';
import { CLI_CONTEXT, aboutAdmin } from '../events.js';
import { endSessions } from '../sessions/end-sessions.js';
import type { AppContext } from '../context.js';

type Deps = Pick<AppContext, 'db' | 'clock'>;

/** Revokes one session by id (from `sessions list`). */
export async function revokeSessionById(deps: Deps, sessionId: string): Promise<boolean> {
  const session = await findSession(deps.db, sessionId);
  if (session === undefined) throw new UsageError(`session ${JSON.stringify(sessionId)} does not exist; see: school-auth sessions list --school ID`);
  const ended = await endSessions(deps, { scope: { sessionId }, reason: 'revoked', audit: { context: CLI_CONTEXT, type: 'session.revoked' } });
  return ended.length > 0;
}

/** Revokes every live session of one admin. */
export async function revokeSessionsOfAdmin(deps: Deps, ref: AdminRef): Promise<number> {
  const admin = await requireAdmin(deps, ref);
  const ended = await endSessions(deps, {
    scope: { adminId: admin.id },
    moveEpoch: true,
    reason: 'revoked',
    audit: { context: CLI_CONTEXT, type: 'session.revoked', about: aboutAdmin(admin), always: true, detail: (count) => `${count} sessions ended` },
  });
  return ended.length;
}
