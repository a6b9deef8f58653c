import type { Db } from '../database.js';

/**
 * Everything kept about one admin, for a subject-access request (`admin export`). Each read names
 * its columns: secrets (password hash, TOTP secrets, passkey keys, code digests) are never read.
 */
export async function adminRecords(db: Db, adminId: string, account: string) {
  const admin = await db
    .selectFrom('admins')
    .innerJoin('schools', 'schools.key', 'admins.school_key')
    .select(['admins.id', 'schools.school_id', 'admins.username', 'admins.external_id', 'admins.scim_profile', 'admins.created_at', 'admins.password_changed_at', 'admins.disabled_at', 'admins.deleted_at', 'admins.modified_at'])
    // Whether a password is set (a PHC string), never the hash.
    .select((eb) => eb('admins.password_hash', 'like', '$%').as('has_password'))
    .where('admins.id', '=', adminId)
    .executeTakeFirstOrThrow();
  return {
    admin,
    emails: await db.selectFrom('admin_emails').select(['address', 'source', 'type', 'added_at']).where('admin_id', '=', adminId).orderBy('address').execute(),
    factors: await db
      .selectFrom('mfa_factors')
      .select(['id', 'type', 'name', 'created_at', 'confirmed_at', 'last_used_at', 'enrolled_ip', 'transports', 'device_type'])
      .where('admin_id', '=', adminId)
      .orderBy('created_at')
      .execute(),
    recoveryCodes: await db.selectFrom('mfa_recovery_codes').select(['created_at', 'used_at']).where('admin_id', '=', adminId).orderBy('created_at').execute(),
    ssoLink: await db.selectFrom('sso_links').select(['email', 'issuer', 'subject', 'created_at', 'linked_at']).where('admin_id', '=', adminId).executeTakeFirst(),
    passwordRecovery: await db.selectFrom('password_recoveries').select(['created_at', 'expires_at', 'requests']).where('admin_id', '=', adminId).executeTakeFirst(),
    sessions: await db
      .selectFrom('sessions')
      .select(['id', 'created_at', 'last_used_at', 'expires_at', 'revoked_at', 'revoke_reason', 'ip', 'user_agent', 'acr', 'amr', 'sso_issuer', 'sso_subject'])
      .where('admin_id', '=', adminId)
      .orderBy('created_at')
      .execute(),
    knownAddresses: await db.selectFrom('known_client_ips').select(['ip', 'last_success_at']).where('account', '=', account).orderBy('last_success_at').execute(),
    events: await db
      .selectFrom('events')
      .select(['seq', 'at', 'type', 'username', 'session_id', 'ip', 'user_agent', 'detail', 'erased_at'])
      .where('admin_id', '=', adminId)
      .orderBy('id')
      .execute(),
    notifications: await db
      .selectFrom('outbox')
      .select(['id', 'type', 'channel', 'state', 'created_at', 'finished_at'])
      .where('channel', '=', 'email')
      .where('target', '=', adminId)
      .orderBy('created_at')
      .execute(),
  };
}
