import type { Generated } from 'kysely';

/** The audit trail. `at` is in epoch milliseconds; `detail` holds the internal reason. */
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
}
