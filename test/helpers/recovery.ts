/** Password recovery in tests: codes without e-mail, resets through HTTP or the function, what they left. */
import type { FastifyInstance } from 'fastify';
import { vi } from 'vitest';
import { createRecoveryLink } from '../../src/auth/accounts/recovery-link.js';
import { resetForgottenPassword } from '../../src/auth/accounts/recovery-reset.js';
import type { AppContext } from '../../src/auth/context.js';
import { AppError } from '../../src/errors.js';
import { gate } from './gate.js';

/** An admin as seedAdmin returns it. */
export interface RecoveringAdmin {
  readonly schoolId: string;
  readonly username: string;
  readonly password: string;
}

export const RESET_URL = '/admin/auth/password/reset';
export const FORGOT_URL = '/admin/auth/password/forgot';
/** The body of every refused reset (unknown admin, wrong, spent or expired code). */
export const INVALID_CODE = '{"detail":"Invalid or expired recovery code"}';

/** A fresh code for the admin, as `admin reset-link` (without --send) makes it. */
export async function issueCode(t: { services: AppContext }, admin: Pick<RecoveringAdmin, 'schoolId' | 'username'>): Promise<string> {
  const handOver = await createRecoveryLink(t.services, admin, false);
  if (handOver.sent) throw new Error('expected the code, not a mail');
  return handOver.code;
}

export function postReset(t: { app: FastifyInstance }, who: Pick<RecoveringAdmin, 'schoolId' | 'username'>, code: string, newPassword: string, ip = '192.0.2.1') {
  const payload = JSON.stringify({ school_id: who.schoolId, username: who.username, code, new_password: newPassword });
  return t.app.inject({ method: 'POST', url: RESET_URL, remoteAddress: ip, headers: { 'content-type': 'application/json' }, payload });
}

/** resetForgottenPassword itself: 'done', 'refused' (the 401 of a bad code); anything else is thrown. */
export async function resetOutcome(t: { services: AppContext }, admin: Pick<RecoveringAdmin, 'schoolId' | 'username'>, code: string, newPassword: string, ip: string): Promise<'done' | 'refused'> {
  try {
    await resetForgottenPassword(t.services, { schoolId: admin.schoolId, username: admin.username, code, newPassword }, { ip, userAgent: 'recovery-test' });
    return 'done';
  } catch (error) {
    if (error instanceof AppError && error.code === 'RECOVERY_CODE_INVALID' && error.status === 401) return 'refused';
    throw error;
  }
}

/** The only admin's row (tests that seed one). */
export const adminRow = (t: { services: AppContext }) => t.services.db.selectFrom('admins').select(['password_hash', 'disabled_at']).executeTakeFirstOrThrow();

/** Sessions neither revoked nor left behind by a moved credential epoch. */
export const liveSessions = (t: { services: AppContext }) =>
  t.services.db
    .selectFrom('sessions')
    .innerJoin('admins', 'admins.id', 'sessions.admin_id')
    .select('sessions.id')
    .where('sessions.revoked_at', 'is', null)
    .whereRef('sessions.credential_epoch', '=', 'admins.credential_epoch')
    .execute();

/**
 * Holds resets after their code check and hashing, before their transaction: `hold(parties)` arms
 * it for the next `parties` resets; `allHeld` once they are all there, `release` lets them on.
 */
export function resetsHeldBeforeTransaction(t: { services: AppContext }) {
  const hasher = t.services.hasher;
  const hash = hasher.hash.bind(hasher);
  let round = { parties: 0, arrived: 0, all: gate(), release: gate() };
  vi.spyOn(hasher, 'hash').mockImplementation(async (password) => {
    const hashed = await hash(password);
    const current = round;
    if (++current.arrived === current.parties) current.all.open();
    await current.release.opened;
    return hashed;
  });
  return (parties: number) => {
    round = { parties, arrived: 0, all: gate(), release: gate() };
    return { allHeld: round.all.opened, release: round.release.open };
  };
}
