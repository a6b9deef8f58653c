import { deleteRecoveryCodes } from '../../db/queries/password-recoveries.js';
import { randomUUID } from 'node:crypto';
import { nowSeconds } from '../../runtime/clock.js';
import { findAdminForLogin, insertAdmin, setAdminDisabled, updatePasswordHash, type AdminForLogin } from '../../db/queries/admins.js';
import { inTransaction } from '../../db/database.js';
import { deleteMfaThrottle } from '../../db/queries/mfa-throttle.js';
import { UsageError } from '../../errors.js';
import { CLI_CONTEXT, aboutAdmin, recordEvent } from '../events.js';
import type { AppContext } from '../context.js';
import { canonicalKey } from '../identity.js';
import { checkNewPassword } from '../passwords/passwords.js';
import { checkIdentifier, requireSchool } from './schools.js';
import { accountOf } from '../throttling/throttle-rules.js';
import { unlockAccount } from '../throttling/throttle.js';
import { endSessions } from '../sessions/end-sessions.js';

export const MAX_USERNAME_LENGTH = 256;

type Deps = Pick<AppContext, 'db' | 'clock' | 'hasher'>;

export interface AdminRef {
  readonly schoolId: string;
  readonly username: string;
}

export async function requireAdmin(deps: Pick<AppContext, 'db'>, ref: AdminRef): Promise<AdminForLogin> {
  const school = await requireSchool(deps.db, ref.schoolId);
  const admin = await findAdminForLogin(deps.db, school.key, canonicalKey(ref.username));
  if (admin === undefined) {
    throw new UsageError(
      `admin ${JSON.stringify(ref.username)} does not exist in school ${JSON.stringify(school.school_id)}; ` +
        `create it with: school-auth admin add --school ${school.school_id} --username ${ref.username}`,
    );
  }
  return admin;
}

export async function addAdmin(deps: Deps, ref: AdminRef, password: string): Promise<string> {
  const school = await requireSchool(deps.db, ref.schoolId);
  const problem = checkIdentifier(ref.username, 'username', MAX_USERNAME_LENGTH) ?? checkNewPassword(password, ref);
  if (problem !== undefined) throw new UsageError(problem);
  const now = nowSeconds(deps.clock);
  const id = randomUUID();
  const inserted = await insertAdmin(deps.db, {
    id,
    school_key: school.key,
    username_key: canonicalKey(ref.username),
    username: ref.username,
    password_hash: await deps.hasher.hash(password),
    disabled_at: null,
    created_at: now,
    password_changed_at: now,
  });
  if (!inserted) throw new UsageError(`admin ${JSON.stringify(ref.username)} already exists in school ${JSON.stringify(school.school_id)}`);
  await recordEvent(deps.db, deps.clock, CLI_CONTEXT, { type: 'admin.created', schoolId: school.key, username: ref.username, adminId: id });
  return id;
}

const sessionsEnded = (count: number) => `${count} sessions ended`;

/**
 * A new password ends every session of the admin: whoever knew the old one is signed out. It
 * lifts every lockout too, the second factor's included: the guesser no longer has the password.
 */
export async function changePassword(deps: Deps, ref: AdminRef, password: string): Promise<number> {
  const admin = await requireAdmin(deps, ref);
  const problem = checkNewPassword(password, { username: admin.username, schoolId: admin.school_id });
  if (problem !== undefined) throw new UsageError(problem);
  const now = nowSeconds(deps.clock);
  const hash = await deps.hasher.hash(password);
  const ended = await inTransaction(deps.db, async (trx) => {
    // A recovery code asked for before no longer sets a password. Deleted before the admin's row is
    // written, in the order a reset locks them (its code, then the admin): the other would deadlock.
    await deleteRecoveryCodes(trx, admin.id);
    await updatePasswordHash(trx, admin.id, hash, now);
    const audit = { context: CLI_CONTEXT, type: 'admin.password_changed', about: aboutAdmin(admin), always: true, detail: sessionsEnded } as const;
    return (await endSessions({ ...deps, db: trx }, { scope: { adminId: admin.id }, moveEpoch: true, reason: 'password_changed', audit })).length;
  });
  await unlockAccount(deps.db, accountOf(admin.school_key, admin.username_key));
  await deleteMfaThrottle(deps.db, admin.id);
  return ended;
}

/**
 * Lifts a lockout after too many failed logins or second factors, and every backoff of the
 * account; the factors stay.
 */
export async function unlockAdmin(deps: Pick<AppContext, 'db' | 'clock'>, ref: AdminRef): Promise<number> {
  const admin = await requireAdmin(deps, ref);
  const cleared = (await unlockAccount(deps.db, accountOf(admin.school_key, admin.username_key))) + (await deleteMfaThrottle(deps.db, admin.id));
  await recordEvent(deps.db, deps.clock, CLI_CONTEXT, { type: 'admin.unlocked', ...aboutAdmin(admin) });
  return cleared;
}

/** Disabling ends every session at once; enabling lets the admin sign in again. */
export async function setAdminEnabled(deps: Pick<AppContext, 'db' | 'clock'>, ref: AdminRef, enabled: boolean): Promise<number> {
  const admin = await requireAdmin(deps, ref);
  const now = nowSeconds(deps.clock);
  return inTransaction(deps.db, async (trx) => {
    // Before the admin's row, in the order a reset locks them (see changePassword).
    if (!enabled) await deleteRecoveryCodes(trx, admin.id);
    await setAdminDisabled(trx, admin.id, !enabled, now);
    if (enabled) {
      await recordEvent(trx, deps.clock, CLI_CONTEXT, { type: 'admin.enabled', ...aboutAdmin(admin) });
      return 0;
    }
    const audit = { context: CLI_CONTEXT, type: 'admin.disabled', about: aboutAdmin(admin), always: true, detail: sessionsEnded } as const;
    return (await endSessions({ ...deps, db: trx }, { scope: { adminId: admin.id }, moveEpoch: true, reason: 'admin_disabled', audit })).length;
  });
}
