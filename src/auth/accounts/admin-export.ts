import { adminRecords } from '../../db/queries/admin-records.js';
import type { AppContext } from '../context.js';
import { accountOf } from '../throttling/throttle-rules.js';
import { findAdminOrDeleted } from './admin-removal.js';
import type { AdminRef } from './admins.js';

const iso = (seconds: number | null | undefined) => (seconds === null || seconds === undefined ? null : new Date(Number(seconds) * 1000).toISOString());
const isoMs = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

/**
 * Everything the service holds about one admin, as JSON (a subject-access request): the account,
 * its addresses, factors (never their secrets), recovery codes (when made and used, never the
 * codes), single sign-on link, sessions, the addresses it signed in from, its audit events and
 * the e-mails sent to it. A deleted admin whose data is not erased yet can still be exported.
 */
export async function exportAdmin(deps: Pick<AppContext, 'db'>, ref: AdminRef): Promise<Record<string, unknown>> {
  const found = await findAdminOrDeleted(deps, ref);
  const records = await adminRecords(deps.db, found.id, accountOf(found.school_key, found.username_key));
  const { admin } = records;
  return {
    admin: {
      id: admin.id,
      school_id: admin.school_id,
      username: admin.username,
      has_password: Boolean(admin.has_password),
      external_id: admin.external_id,
      directory_profile: admin.scim_profile === null ? null : (JSON.parse(admin.scim_profile) as unknown),
      created_at: iso(admin.created_at),
      password_changed_at: iso(admin.password_changed_at),
      disabled_at: iso(admin.disabled_at),
      deleted_at: iso(admin.deleted_at),
      modified_at: iso(admin.modified_at),
    },
    emails: records.emails.map((email) => ({ ...email, added_at: iso(email.added_at) })),
    second_factors: records.factors.map((factor) => ({ ...factor, created_at: iso(factor.created_at), confirmed_at: iso(factor.confirmed_at), last_used_at: iso(factor.last_used_at) })),
    recovery_codes: records.recoveryCodes.map((code) => ({ created_at: iso(code.created_at), used_at: iso(code.used_at) })),
    single_sign_on: records.ssoLink === undefined ? null : { ...records.ssoLink, created_at: iso(records.ssoLink.created_at), linked_at: iso(records.ssoLink.linked_at) },
    password_recovery: records.passwordRecovery === undefined ? null : { ...records.passwordRecovery, created_at: iso(records.passwordRecovery.created_at), expires_at: iso(records.passwordRecovery.expires_at) },
    sessions: records.sessions.map((session) => ({
      ...session,
      created_at: iso(session.created_at),
      last_used_at: iso(session.last_used_at),
      expires_at: iso(session.expires_at),
      revoked_at: iso(session.revoked_at),
    })),
    sign_in_addresses: records.knownAddresses.map((known) => ({ ip: known.ip, last_success_at: iso(known.last_success_at) })),
    audit_events: records.events.map((event) => ({ ...event, at: isoMs(event.at), erased_at: isoMs(event.erased_at) })),
    notifications: records.notifications.map((message) => ({ ...message, created_at: isoMs(message.created_at), finished_at: isoMs(message.finished_at) })),
  };
}
