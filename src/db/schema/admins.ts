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
}
