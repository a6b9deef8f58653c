import type { AppContext } from '../context.js';
import { findAdminForLogin } from '../../db/queries/admins.js';
import { AppError } from '../../errors.js';
import { recordEvent, type AuditEntry, type RequestContext } from '../events.js';
import { canonicalKey } from '../identity.js';
import { lockedByThisFailure, reserveLoginAttempt, reservePasskeyAttempt, type Reservation } from './throttle.js';
import type { PasskeyCredential } from './throttle-rules.js';

type Who = Pick<AuditEntry, 'schoolId' | 'username' | 'adminId'>;
type Granted = Reservation & { granted: true };

/**
 * Admits one password check into the login throttle (a sign-in, or the current password of a
 * self-service change), or refuses it with the 429, recording only the first refusal of a block.
 */
export async function admitPasswordCheck(deps: AppContext, account: string, ip: string, context: RequestContext, who: Who): Promise<Granted> {
  return admitted(deps, await reserveLoginAttempt(deps, account, ip), context, who);
}

/** Admits one passkey sign-in into the throttle (its address, and the credential there), or refuses it with the login's 429. */
export async function admitPasskeyAttempt(deps: AppContext, credential: PasskeyCredential | undefined, ip: string, context: RequestContext, who: Who): Promise<Granted> {
  return admitted(deps, await reservePasskeyAttempt(deps, credential, ip), context, who);
}

async function admitted(deps: AppContext, reservation: Reservation, context: RequestContext, who: Who): Promise<Granted> {
  if (reservation.granted) return reservation;
  if (reservation.firstRefusal) {
    await recordEvent(deps.db, deps.clock, context, { type: 'login.throttled', ...(await withAdminId(deps, who)), detail: `retry after ${reservation.wait}s` });
  }
  throw new AppError('LOGIN_THROTTLED', { headers: { 'retry-after': String(reservation.wait) } });
}

/**
 * `who` with the id of the admin it names, when a sign-in refused before any lookup names an
 * existing one: the event holds their username, address and user agent, so erasing the admin
 * (admin delete --erase) must find it by that id. Looked up once per block, known or not.
 */
async function withAdminId(deps: Pick<AppContext, 'db'>, who: Who): Promise<Who> {
  if (who.adminId !== undefined || typeof who.schoolId !== 'string' || typeof who.username !== 'string') return who;
  const admin = await findAdminForLogin(deps.db, who.schoolId, canonicalKey(who.username));
  return { ...who, adminId: admin?.id ?? null };
}

/** Records a refused sign-in (counted as a failure when it was admitted), and the lockout it caused. */
export async function recordPasswordFailure(deps: AppContext, reservation: Granted, context: RequestContext, who: Who, reason: string | null): Promise<void> {
  await recordEvent(deps.db, deps.clock, context, { type: 'login.failure', ...who, detail: reason });
  if (lockedByThisFailure(reservation, deps.config.throttle)) {
    await recordEvent(deps.db, deps.clock, context, { type: 'account.locked', ...who });
  }
}
