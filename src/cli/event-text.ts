import { count } from './plural.js';

/** What each audit event type means, for the `events` table (--json keeps the stored codes). */
const WHAT: Record<string, string> = {
  'login.success': 'signed in',
  'login.failure': 'sign-in refused',
  'login.throttled': 'sign-in held back by the throttle',
  'account.locked': 'account locked after too many failed sign-ins',
  'admin.unlocked': 'account unlocked',
  'refresh.reuse': 'a used refresh token came back: the session was ended',
  logout: 'signed out',
  'session.revoked': 'session ended',
  'admin.created': 'administrator created',
  'admin.password_changed': 'password changed',
  'admin.disabled': 'administrator disabled',
  'admin.enabled': 'administrator enabled',
  'school.created': 'school created',
  'school.suspended': 'school suspended',
  'school.resumed': 'school resumed',
  'school.mfa_policy': 'second-factor policy set',
  'school.passkey_policy': 'passkey sign-in policy set',
  'keys.created': 'signing key created at start',
  'keys.rotated': 'signing key rotated',
  'keys.revoked': 'signing key revoked',
  'keys.encrypted': 'stored secrets encrypted',
  'mfa.challenged': 'second factor asked for',
  'mfa.success': 'second factor accepted',
  'mfa.failure': 'second factor refused',
  'mfa.throttled': 'second factor held back by the throttle',
  'mfa.locked': 'second factor locked',
  'mfa.enrolled': 'second factor added',
  'mfa.removed': 'second factor removed',
  'mfa.recovery_codes_renewed': 'recovery codes renewed',
  'mfa.reset': 'second factors reset by an operator',
  'admin.updated': 'administrator changed by the directory',
  'admin.deleted': 'administrator deleted',
  'admin.erased': "administrator's personal data erased",
  'scim.token_created': 'SCIM token created',
  'scim.token_revoked': 'SCIM token revoked',
};

/** Internal reason codes stored as an event's detail. */
const REASONS: Record<string, string> = {
  unknown_account: 'no such administrator',
  wrong_password: 'wrong password',
  wrong_current_password: 'wrong current password',
  school_suspended: 'the school is suspended',
  admin_disabled: 'the administrator is disabled',
  sessions_ended_meanwhile: 'the sessions were ended meanwhile',
  enroll: 'to enroll one',
  login: 'to sign in',
};

/** "1 factors removed" as a person writes it: "1 factor removed". */
function pluralize(detail: string): string {
  return detail.replace(/\b(\d+) ([a-z_]+?)s\b/g, (_, n: string, noun: string) => count(Number(n), noun.replace(/_/g, ' ')));
}

/** An event as a sentence: what happened, then its detail in words. */
export function describeEvent(type: string, detail: string | null): string {
  const what = WHAT[type] ?? type;
  if (detail === null || detail === '') return what;
  return `${what}: ${REASONS[detail] ?? pluralize(detail)}`;
}
