import type { Generated } from 'kysely';

/** An address an admin is told at (migration 015). `source`: `operator`, `sso` or `scim`. */
export interface AdminEmailsTable {
  admin_id: string;
  address: string;
  source: string;
  /** The directory's label (`work`, `home`...; migration 017); null: not said, read as `work`. */
  type: Generated<string | null>;
  added_at: number;
}

/** A platform endpoint. `events` is `*` or a comma-separated list; `school_key` null for all schools. */
export interface WebhooksTable {
  id: string;
  url: string;
  events: string;
  school_key: string | null;
  secret: string;
  previous_secret: string | null;
  /** Epoch ms until which the previous secret also signs. */
  previous_until: number | null;
  created_at: number;
}

/**
 * One message to one recipient. `channel` is `email` (target: the admin id, whose addresses are
 * read when it is sent) or `webhook` (target: the webhook id). `state`: `pending`, `delivered`,
 * `dead` (out of retries, or refused for good) or `dropped` (the outbox was full). Times in epoch ms.
 */
export interface OutboxTable {
  id: string;
  created_at: number;
  type: string;
  channel: string;
  target: string;
  payload: string;
  state: string;
  attempts: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  last_error: string | null;
  finished_at: number | null;
}

/** An admin's live password-recovery code (its SHA-256 digest); times in epoch seconds. */
export interface PasswordRecoveriesTable {
  admin_id: string;
  code_hash: string;
  created_at: number;
  expires_at: number;
  /** Codes asked for since `window_start`. */
  requests: number;
  window_start: number;
}

/** One delivery attempt; `ok` is 1 or 0. */
export interface OutboxAttemptsTable {
  message_id: string;
  attempt: number;
  at: number;
  ok: number;
  status: number | null;
  error: string | null;
  duration_ms: number;
}
