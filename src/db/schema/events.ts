import type { Generated } from 'kysely';

/**
 * The audit trail. `at` is in epoch milliseconds; `detail` holds the internal reason. `seq` and
 * `hash` are null until the sealer chains the event (see auth/audit/sealer.ts).
 */
export interface EventsTable {
  id: Generated<number>;
  at: number;
  type: string;
  school_id: string | null;
  username: string | null;
  admin_id: string | null;
  session_id: string | null;
  ip: string | null;
  user_agent: string | null;
  detail: string | null;
  seq: Generated<number | null>;
  hash: Generated<string | null>;
  /** Hex of 32 random bytes; null once erased, and on events written before migration 018. */
  personal_salt: Generated<string | null>;
  /** SHA-256 over the salt and the personal fields (db/event-digest.ts); null before migration 018. */
  personal_digest: Generated<string | null>;
  /** Epoch ms at which the personal fields were erased. */
  erased_at: Generated<number | null>;
}
