import type { Db } from '../db/database.js';
import { hasEmail } from '../db/queries/admin-emails.js';
import { countPending, dropOldestPending, insertMessages, type NewOutboxMessage } from '../db/queries/outbox.js';
import { insertEvent } from '../db/queries/events.js';
import { webhooksFor } from '../db/queries/webhooks.js';
import { secureRandomBytes } from './secure-random.js';

/** Who is told of an event: the admin it is about (by e-mail) and the platform (by webhook), or the platform only. */
type Audience = 'admin and platform' | 'platform';

/** The events that notify, and whom (docs/notifications.md lists each with its payload). */
export const NOTIFYING_EVENTS: Readonly<Record<string, Audience>> = {
  'admin.password_changed': 'admin and platform',
  'mfa.enrolled': 'admin and platform',
  'mfa.removed': 'admin and platform',
  'mfa.recovery_codes_renewed': 'admin and platform',
  'mfa.recovery_code_used': 'admin and platform',
  'mfa.reset': 'admin and platform',
  'mfa.locked': 'admin and platform',
  'login.new_address': 'admin and platform',
  'account.locked': 'admin and platform',
  'admin.disabled': 'admin and platform',
  'admin.enabled': 'admin and platform',
  'sso.linked': 'admin and platform',
  'sso.unlinked': 'admin and platform',
  'refresh.reuse': 'admin and platform',
  'admin.deleted': 'platform',
  'keys.revoked': 'platform',
};

/**
 * The most messages waiting at once. A flood beyond it (sign-ins from ever new addresses) drops
 * the oldest waiting messages, counted and recorded as an `outbox.dropped` event, so the table
 * stays bounded whatever clients do.
 */
export const OUTBOX_CAP = 10_000;

/** What a notification says: the Standard Webhooks payload, and what an e-mail is written from. */
export interface NotificationPayload {
  readonly type: string;
  readonly timestamp: string;
  readonly data: {
    readonly school_id: string | null;
    readonly username: string | null;
    readonly admin_id: string | null;
    readonly session_id: string | null;
    readonly ip: string | null;
    readonly user_agent: string | null;
    readonly detail: string | null;
    /** A password-recovery e-mail's code, sealed (never sent to webhooks). */
    readonly code?: string;
  };
}

function newMessage(at: number, payload: NotificationPayload, channel: string, target: string): NewOutboxMessage {
  return {
    id: `msg_${secureRandomBytes(16).toString('base64url')}`,
    created_at: at,
    type: payload.type,
    channel,
    target,
    payload: JSON.stringify(payload),
    next_attempt_at: at,
  };
}

/** An e-mail to one admin only (a password-recovery code), written through `db` like any other message. */
export async function enqueueAdminEmail(db: Db, at: number, adminId: string, payload: NotificationPayload): Promise<void> {
  await makeRoom(db, at, 1);
  await insertMessages(db, [newMessage(at, payload, 'email', adminId)]);
}

/**
 * Writes the messages an event sends into the outbox, through `db`: the caller's transaction when
 * the change is made in one, so the message exists exactly when the change does.
 */
export async function enqueueNotifications(db: Db, at: number, payload: NotificationPayload): Promise<void> {
  const audience = NOTIFYING_EVENTS[payload.type];
  if (audience === undefined) return;
  const messages: NewOutboxMessage[] = [];
  const message = (channel: string, target: string) => newMessage(at, payload, channel, target);
  const adminId = payload.data.admin_id;
  // An event about an account notifies only when the account exists: failed sign-ins to made-up
  // usernames (which lock like real ones, so as not to tell them apart) tell nobody anything.
  if (audience === 'admin and platform' && adminId === null) return;
  if (audience === 'admin and platform' && adminId !== null && (await hasEmail(db, adminId))) messages.push(message('email', adminId));
  for (const webhook of await webhooksFor(db, payload.type, payload.data.school_id)) messages.push(message('webhook', webhook.id));
  if (messages.length === 0) return;
  await makeRoom(db, at, messages.length);
  await insertMessages(db, messages);
}

async function makeRoom(db: Db, at: number, needed: number): Promise<void> {
  const over = (await countPending(db)) + needed - OUTBOX_CAP;
  if (over <= 0) return;
  const dropped = await dropOldestPending(db, over, at);
  await insertEvent(db, {
    at,
    type: 'outbox.dropped',
    school_id: null,
    username: null,
    admin_id: null,
    session_id: null,
    ip: null,
    user_agent: null,
    detail: `${dropped} oldest waiting messages dropped: the outbox holds at most ${OUTBOX_CAP}`,
  }, secureRandomBytes(32).toString('hex'));
}
