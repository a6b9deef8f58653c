import type { AppContext } from '../auth/context.js';
import type { NotificationPayload } from '../auth/notifications.js';
import { emailsOf } from '../db/queries/admin-emails.js';
import type { OutboxMessage } from '../db/queries/outbox.js';
import { findWebhook } from '../db/queries/webhooks.js';
import type { AddressPolicy } from './address-guard.js';
import type { Mailer } from './email-send.js';
import { emailText, type EmailText } from './email-text.js';
import { recoveryEmailText } from './recovery-email-text.js';
import { openRecoveryCode } from '../auth/accounts/recovery-code.js';
import { postWebhook } from './webhook-post.js';
import { signatureHeader } from './webhook-signature.js';
import { signingSecrets } from './webhooks.js';

/** What a delivery needs besides the database: the mailer (none without SMTP_URL) and the address policy. */
export interface Channels {
  readonly mailer: Mailer | undefined;
  readonly policy: AddressPolicy;
}

export interface SendResult {
  readonly ok: boolean;
  /** Retrying cannot help: the message becomes a dead letter now. */
  readonly permanent: boolean;
  readonly status: number | null;
  readonly error: string | null;
}

const failed = (error: string, permanent = false): SendResult => ({ ok: false, permanent, status: null, error });

async function sendWebhook(deps: Pick<AppContext, 'db' | 'config' | 'clock'>, message: OutboxMessage, channels: Channels): Promise<SendResult> {
  const webhook = await findWebhook(deps.db, message.target);
  if (webhook === undefined) return failed('the webhook was removed', true);
  const now = deps.clock.now();
  const timestamp = Math.floor(now / 1000);
  let secrets: string[];
  try {
    secrets = signingSecrets(webhook, deps, now);
  } catch (error) {
    // Sealed under another key file than this instance's: retried, and said in the delivery log.
    return failed((error as Error).message.slice(0, 300));
  }
  const headers = { 'webhook-id': message.id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureHeader(secrets, message.id, timestamp, message.payload) };
  try {
    const { status, answer } = await postWebhook(new URL(webhook.url), message.payload, headers, channels.policy);
    if (status >= 200 && status < 300) return { ok: true, permanent: false, status, error: null };
    return { ok: false, permanent: false, status, error: `HTTP ${status}${answer === '' ? '' : `: ${answer.slice(0, 200)}`}` };
  } catch (error) {
    // The request's AbortSignal.timeout fails it with an AbortError whose cause is the TimeoutError.
    const timedOut = [error, (error as { cause?: unknown }).cause].some((cause) => (cause as Error | undefined)?.name === 'TimeoutError');
    return failed(timedOut ? 'no answer within 5 s' : (error as Error).message.slice(0, 300));
  }
}

/** The e-mail of a message: a recovery code's own, or what happened to the account. */
function emailOf(deps: Pick<AppContext, 'config'>, message: OutboxMessage): EmailText {
  const payload = JSON.parse(message.payload) as NotificationPayload;
  if (payload.type !== 'password.recovery') return emailText(payload);
  const code = openRecoveryCode(payload.data.code ?? '', message.target, deps.config.keyEncryption);
  return recoveryEmailText(payload, code, deps.config.passwordRecovery.url);
}

async function sendEmail(deps: Pick<AppContext, 'db' | 'config'>, message: OutboxMessage, channels: Channels): Promise<SendResult> {
  if (channels.mailer === undefined) return failed('not sent: SMTP_URL is not set', true);
  const addresses = await emailsOf(deps.db, message.target);
  if (addresses.length === 0) return failed('not sent: the admin has no e-mail address now', true);
  let text: EmailText;
  try {
    text = emailOf(deps, message);
  } catch (error) {
    return failed((error as Error).message.slice(0, 300));
  }
  const result = await channels.mailer.send(addresses, text);
  return result.sent ? { ok: true, permanent: false, status: null, error: result.error } : failed(result.error ?? 'not sent', result.permanent);
}

/** One attempt to deliver one message through its channel; never throws for the receiver's sake. */
export function sendMessage(deps: Pick<AppContext, 'db' | 'config' | 'clock'>, message: OutboxMessage, channels: Channels): Promise<SendResult> {
  if (message.channel === 'webhook') return sendWebhook(deps, message, channels);
  return sendEmail(deps, message, channels);
}
