import type { Generated } from 'kysely';

/** A school. `key` is the canonical form of `school_id` used for look-ups (NFKC + case folding). */
export interface SchoolsTable {
  key: string;
  school_id: string;
  name: string;
  suspended_at: number | null;
  created_at: number;
  /** `optional` (admins with a factor must present it) or `required` (every admin must). */
  mfa_policy: Generated<string>;
  /** 1: admins may recover a forgotten password by e-mail; 0: only an operator helps. */
  password_recovery: Generated<number>;
  /** `allowed` (password or passkey alone), `required` (an admin with a discoverable passkey uses it) or `off`. */
  passkey_policy: Generated<string>;
}
