import type { AppContext } from '../auth/context.js';
import { CLI_CONTEXT, recordEvent } from '../auth/events.js';
import { NOTIFYING_EVENTS } from '../auth/notifications.js';
import { openSecret, sealSecret, type SealedSecretOwner } from '../auth/keys/key-encryption.js';
import { secureRandomBytes } from '../auth/secure-random.js';
import { deleteWebhook, findWebhook, insertWebhook, replaceWebhookSecret, type Webhook } from '../db/queries/webhooks.js';
import { requireSchool } from '../auth/accounts/schools.js';
import { UsageError } from '../errors.js';
import { urlProblem } from './webhook-post.js';
import { newWebhookSecret } from './webhook-signature.js';

type Deps = Pick<AppContext, 'db' | 'clock' | 'config'>;

/** How long the previous secret keeps signing after a rotation, so receivers can switch over. */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

function owner(id: string, which: 'current' | 'previous'): SealedSecretOwner {
  return { label: `school-auth webhook ${id} ${which}`, name: `the ${which} secret of webhook ${id}` };
}

function eventsOf(list: string | undefined): string {
  if (list === undefined || list.trim() === '*') return '*';
  const types = list.split(',').map((type) => type.trim()).filter((type) => type !== '');
  const unknown = types.filter((type) => NOTIFYING_EVENTS[type] === undefined);
  if (types.length === 0 || unknown.length > 0) {
    throw new UsageError(`--events: ${unknown.length > 0 ? `unknown ${unknown.join(', ')}` : 'names no event'}; the events are ${Object.keys(NOTIFYING_EVENTS).join(', ')}`);
  }
  return [...new Set(types)].join(',');
}

/** Adds an endpoint; returns it with its secret, which is shown this once and stored sealed. */
export async function addWebhook(deps: Deps, options: { url: string; events?: string; schoolId?: string }): Promise<{ id: string; secret: string }> {
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new UsageError(`--url: ${JSON.stringify(options.url)} is not a URL`);
  }
  const problem = urlProblem(url, deps.config.notifications.webhookAllowHttpLoopback);
  if (problem !== undefined) throw new UsageError(`--url: ${problem}`);
  const school = options.schoolId === undefined ? undefined : await requireSchool(deps.db, options.schoolId);
  const id = `wh_${secureRandomBytes(9).toString('base64url')}`;
  const secret = newWebhookSecret();
  const events = eventsOf(options.events);
  await insertWebhook(deps.db, {
    id,
    url: url.toString(),
    events,
    school_key: school?.key ?? null,
    secret: sealSecret(secret, owner(id, 'current'), deps.config.keyEncryption),
    previous_secret: null,
    previous_until: null,
    created_at: deps.clock.now(),
  });
  await recordEvent(deps.db, deps.clock, CLI_CONTEXT, { type: 'webhook.added', schoolId: school?.key ?? null, detail: `${id} ${url.toString()} events ${events}` });
  return { id, secret };
}

export async function removeWebhook(deps: Deps, id: string): Promise<void> {
  if (!(await deleteWebhook(deps.db, id))) throw new UsageError(`no webhook ${JSON.stringify(id)}`);
  await recordEvent(deps.db, deps.clock, CLI_CONTEXT, { type: 'webhook.removed', detail: id });
}

/** A new secret, returned once; the old one signs alongside it for ROTATION_OVERLAP_MS. */
export async function rotateWebhookSecret(deps: Deps, id: string): Promise<string> {
  const webhook = await findWebhook(deps.db, id);
  if (webhook === undefined) throw new UsageError(`no webhook ${JSON.stringify(id)}`);
  const current = openSecret(webhook.secret, owner(id, 'current'), deps.config.keyEncryption);
  const secret = newWebhookSecret();
  const sealed = sealSecret(secret, owner(id, 'current'), deps.config.keyEncryption);
  const previous = sealSecret(current, owner(id, 'previous'), deps.config.keyEncryption);
  if (!(await replaceWebhookSecret(deps.db, id, sealed, previous, deps.clock.now() + ROTATION_OVERLAP_MS))) throw new UsageError(`no webhook ${JSON.stringify(id)}`);
  await recordEvent(deps.db, deps.clock, CLI_CONTEXT, { type: 'webhook.secret_rotated', detail: id });
  return secret;
}

/** The secrets that sign a delivery now: the current one, and the previous one while its overlap lasts. */
export function signingSecrets(webhook: Webhook, deps: Pick<Deps, 'config'>, now: number): string[] {
  const secrets = [openSecret(webhook.secret, owner(webhook.id, 'current'), deps.config.keyEncryption)];
  if (webhook.previous_secret !== null && (webhook.previous_until ?? 0) > now) {
    secrets.push(openSecret(webhook.previous_secret, owner(webhook.id, 'previous'), deps.config.keyEncryption));
  }
  return secrets;
}
