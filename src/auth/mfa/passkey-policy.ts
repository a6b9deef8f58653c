import type { AppContext } from '../context.js';
import { inTransaction } from '../../db/database.js';
import { setSchoolPasskeyPolicy } from '../../db/queries/schools.js';
import { UsageError } from '../../errors.js';
import { requireSchool } from '../accounts/schools.js';
import { CLI_CONTEXT, recordEvent } from '../events.js';
import { endSessions } from '../sessions/end-sessions.js';

type Deps = Pick<AppContext, 'db' | 'clock'>;

export const PASSKEY_POLICIES = ['allowed', 'required', 'off'] as const;

/**
 * Sets whether a school's admins sign in with a passkey alone: `allowed` (the default: passkey or
 * password), `required` (an admin who has a discoverable passkey signs in with it; their password
 * step is refused) or `off` (the passkey stays a second factor only). `required` also ends, in the
 * same transaction, the password sessions of the admins it now concerns, as `school mfa required`
 * ends the password-only ones: otherwise they would go on refreshing. Logins in flight are decided
 * by the session's insert (insertSession), whichever commits first.
 */
export async function setPasskeyPolicy(deps: Deps, schoolId: string, policy: string): Promise<{ sessionsEnded: number }> {
  const known = PASSKEY_POLICIES.find((candidate) => candidate === policy);
  if (known === undefined) throw new UsageError(`the policy must be "allowed", "required" or "off", not ${JSON.stringify(policy)}`);
  const school = await requireSchool(deps.db, schoolId);
  const sessionsEnded = await inTransaction(deps.db, async (trx) => {
    await setSchoolPasskeyPolicy(trx, school.key, known);
    const audit = { context: CLI_CONTEXT, type: 'school.passkey_policy', about: { schoolId: school.key } } as const;
    if (known !== 'required') {
      await recordEvent(trx, deps.clock, audit.context, { type: audit.type, ...audit.about, detail: known });
      return 0;
    }
    const detail = (count: number) => `${known}; ${count} password sessions of passkey holders ended`;
    const ended = await endSessions({ ...deps, db: trx }, { scope: { passwordOfPasskeyHolders: school.key }, reason: 'passkey_required', audit: { ...audit, always: true, detail } });
    return ended.length;
  });
  return { sessionsEnded };
}
