import type { Generated } from 'kysely';

/** A school administrator. `id` is the stable subject of every access token. */
export interface AdminsTable {
  id: string;
  school_key: string;
  username_key: string;
  username: string;
  password_hash: string;
  disabled_at: number | null;
  created_at: number;
  password_changed_at: number;
  /** Moves on whenever all of the admin's sessions must end (see migration 005). */
  credential_epoch: Generated<number>;
  /** The directory's id (SCIM `externalId`), unique in the school. */
  external_id: Generated<string | null>;
  /** SCIM attributes without a column of their own, as JSON (migration 017). */
  scim_profile: Generated<string | null>;
  /** When SCIM or an operator last changed the account (SCIM `meta.lastModified`); null: never since created. */
  modified_at: Generated<number | null>;
  /** Set when the admin was deleted; the row stays while its ended sessions are in the feed. */
  deleted_at: Generated<number | null>;
  /** Set when the admin's personal data was erased from the audit trail (migration 018). */
  erased_at: Generated<number | null>;
}
