import type { AdminsTable } from './admins.js';
import type { EventsTable } from './events.js';
import type { KnownClientIpsTable } from './known-client-ips.js';
import type { RefreshTokensTable } from './refresh-tokens.js';
import type { SchoolsTable } from './schools.js';
import type { SessionsTable } from './sessions.js';
import type { SigningKeysTable } from './signing-keys.js';
import type { ThrottleCountersTable } from './throttle-counters.js';

export interface DatabaseSchema {
  schools: SchoolsTable;
  admins: AdminsTable;
  sessions: SessionsTable;
  refresh_tokens: RefreshTokensTable;
  signing_keys: SigningKeysTable;
  events: EventsTable;
  throttle_counters: ThrottleCountersTable;
  known_client_ips: KnownClientIpsTable;
}
