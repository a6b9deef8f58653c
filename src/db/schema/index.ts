import type { AdminsTable } from './admins.js';
import type { AuditCheckpointsTable } from './audit-checkpoints.js';
import type { AuditSealerTable } from './audit-sealer.js';
import type { EventsTable } from './events.js';
import type { KnownClientIpsTable } from './known-client-ips.js';
import type { MfaChallengesTable } from './mfa-challenges.js';
import type { MfaFactorsTable } from './mfa-factors.js';
import type { MfaRecoveryCodesTable } from './mfa-recovery-codes.js';
import type { MfaThrottleTable } from './mfa-throttle.js';
import type { RefreshTokensTable } from './refresh-tokens.js';
import type { RevocationSequenceTable } from './revocation-sequence.js';
import type { SchoolsTable } from './schools.js';
import type { SessionsTable } from './sessions.js';
import type { SigningKeysTable } from './signing-keys.js';
import type { ThrottleCountersTable } from './throttle-counters.js';
import type { WebauthnRegistrationsTable } from './webauthn-registrations.js';

export interface DatabaseSchema {
  schools: SchoolsTable;
  admins: AdminsTable;
  sessions: SessionsTable;
  refresh_tokens: RefreshTokensTable;
  signing_keys: SigningKeysTable;
  events: EventsTable;
  throttle_counters: ThrottleCountersTable;
  known_client_ips: KnownClientIpsTable;
  mfa_factors: MfaFactorsTable;
  mfa_recovery_codes: MfaRecoveryCodesTable;
  mfa_challenges: MfaChallengesTable;
  mfa_throttle: MfaThrottleTable;
  webauthn_registrations: WebauthnRegistrationsTable;
  revocation_sequence: RevocationSequenceTable;
  audit_checkpoints: AuditCheckpointsTable;
  audit_sealer: AuditSealerTable;
}
