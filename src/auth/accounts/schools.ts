import { nowSeconds } from '../../runtime/clock.js';
import type { Db } from '../../db/database.js';
import { findSchool, insertSchool, setSchoolSuspended, type School } from '../../db/queries/schools.js';
import { inTransaction } from '../../db/database.js';
import { UsageError } from '../../errors.js';
import { CLI_CONTEXT, recordEvent } from '../events.js';
import type { AppContext } from '../context.js';
import { canonicalKey } from '../identity.js';
import { endSessions } from '../sessions/end-sessions.js';

const MAX_SCHOOL_ID_LENGTH = 128;

type Deps = Pick<AppContext, 'db' | 'clock'>;

/** Looks a school up by its id as typed; the error tells the operator how to create it. */
export async function requireSchool(db: Db, schoolId: string): Promise<School> {
  const school = await findSchool(db, canonicalKey(schoolId));
  if (school === undefined) {
    throw new UsageError(`school ${JSON.stringify(schoolId)} does not exist; create it with: school-auth school add ${schoolId}`);
  }
  return school;
}

export async function addSchool(deps: Deps, schoolId: string, name: string | undefined): Promise<School> {
  const problem = checkIdentifier(schoolId, 'school id', MAX_SCHOOL_ID_LENGTH);
  if (problem !== undefined) throw new UsageError(problem);
  const school: School = {
    key: canonicalKey(schoolId),
    school_id: schoolId,
    name: name ?? schoolId,
    suspended_at: null,
    created_at: nowSeconds(deps.clock),
    mfa_policy: 'optional',
    password_recovery: 1,
    passkey_policy: 'allowed',
  };
  if (!(await insertSchool(deps.db, school))) throw new UsageError(`school ${JSON.stringify(schoolId)} already exists`);
  await recordEvent(deps.db, deps.clock, CLI_CONTEXT, { type: 'school.created', schoolId: school.key });
  return school;
}

/** Suspending a school ends every session of its admins; they cannot sign in until it resumes. */
export async function suspendSchool(deps: Deps, schoolId: string): Promise<number> {
  const school = await requireSchool(deps.db, schoolId);
  const now = nowSeconds(deps.clock);
  return inTransaction(deps.db, async (trx) => {
    await setSchoolSuspended(trx, school.key, now);
    const audit = { context: CLI_CONTEXT, type: 'school.suspended', about: { schoolId: school.key }, always: true, detail: (count: number) => `${count} sessions ended` } as const;
    return (await endSessions({ ...deps, db: trx }, { scope: { schoolKey: school.key }, moveEpoch: true, reason: 'school_suspended', audit })).length;
  });
}

export async function resumeSchool(deps: Deps, schoolId: string): Promise<void> {
  const school = await requireSchool(deps.db, schoolId);
  await setSchoolSuspended(deps.db, school.key, null);
  await recordEvent(deps.db, deps.clock, CLI_CONTEXT, { type: 'school.resumed', schoolId: school.key });
}

/** Identifiers are shown in logs and tokens: no control characters, no surrounding spaces. */
export function checkIdentifier(value: string, what: string, maxLength: number): string | undefined {
  if (value.length === 0) return `the ${what} must not be empty`;
  if ([...value].length > maxLength) return `the ${what} must be at most ${maxLength} characters long`;
  if (value.trim() !== value) return `the ${what} must not start or end with spaces`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) return `the ${what} must not contain control characters`;
  return undefined;
}
