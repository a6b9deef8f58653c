import { createHmac } from 'node:crypto';
import { secureRandomBytes } from '../auth/secure-random.js';

/** Standard Webhooks secrets: `whsec_` and the base64 of 32 random bytes. */
const PREFIX = 'whsec_';

export function newWebhookSecret(): string {
  return PREFIX + secureRandomBytes(32).toString('base64');
}

/**
 * The `webhook-signature` header of the Standard Webhooks specification: `v1,` and the base64
 * HMAC-SHA256 of `id.timestamp.body` under each secret, space-separated (two while a rotation's
 * overlap lasts, so a receiver holding either secret verifies).
 */
export function signatureHeader(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
      return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
    })
    .join(' ');
}
