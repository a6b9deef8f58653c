import type { Kysely, Migration } from 'kysely';

/**
 * Passkeys and security keys (docs/second-factor.md). A WebAuthn factor is an `mfa_factors` row with its
 * credential's id, public key (base64url COSE), signature counter, transports and device type;
 * it has no secret (`secret` is empty). The challenge of a sign-in lives on its mfa_token's row;
 * that of a registration in `webauthn_registrations`, one per admin, so neither can pile up.
 */
export const webauthn: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('mfa_factors').addColumn('credential_id', 'text').execute();
    await db.schema.alterTable('mfa_factors').addColumn('public_key', 'text').execute();
    await db.schema.alterTable('mfa_factors').addColumn('sign_count', 'bigint').execute();
    await db.schema.alterTable('mfa_factors').addColumn('transports', 'text').execute();
    await db.schema.alterTable('mfa_factors').addColumn('device_type', 'text').execute();
    await db.schema.createIndex('mfa_factors_credential').on('mfa_factors').column('credential_id').unique().execute();
    await db.schema.alterTable('mfa_challenges').addColumn('webauthn_challenge', 'text').execute();

    await db.schema
      .createTable('webauthn_registrations')
      .addColumn('admin_id', 'text', (col) => col.primaryKey().references('admins.id'))
      .addColumn('challenge', 'text', (col) => col.notNull())
      .addColumn('expires_at', 'bigint', (col) => col.notNull())
      .execute();
  },
};
