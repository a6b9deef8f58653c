import { createHash } from 'node:crypto';
import type { KeyEncryptionKey } from '../../config/key-encryption-key.js';
import { openSecret, sealSecret, type SealedSecretOwner } from '../keys/key-encryption.js';
import { secureRandomBytes } from '../secure-random.js';
import type { NotificationPayload } from '../notifications.js';

/** A recovery code: 256 random bits, base64url (43 characters). */
export function generateRecoveryCode(): string {
  return secureRandomBytes(32).toString('base64url');
}

/** What is stored: the SHA-256 digest, so a copy of the database holds no usable code. */
export function hashPasswordRecoveryCode(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('base64url');
}

function owner(adminId: string): SealedSecretOwner {
  return { label: `school-auth password recovery ${adminId}`, name: 'a password recovery code' };
}

/** The code as the outbox keeps it until mailed: sealed under KEY_ENCRYPTION_KEY_FILE when one is set. */
export function sealRecoveryCode(code: string, adminId: string, encryption: KeyEncryptionKey | undefined): string {
  return sealSecret(code, owner(adminId), encryption);
}

export function openRecoveryCode(stored: string, adminId: string, encryption: KeyEncryptionKey | undefined): string {
  return openSecret(stored, owner(adminId), encryption);
}

/**
 * The front end's page with what completes the recovery in its fragment, which browsers never
 * send to a server: the code stays out of access logs, proxies and Referer headers.
 */
export function recoveryLink(pageUrl: string, who: { schoolId: string; username: string }, code: string): string {
  const fragment = new URLSearchParams({ school_id: who.schoolId, username: who.username, code });
  return `${pageUrl}#${fragment.toString()}`;
}

/** The e-mail a code travels in (type `password.recovery`, to the admin only, never to webhooks). */
export function recoveryPayload(
  admin: { readonly id: string; readonly school_key: string; readonly username: string },
  from: { readonly ip: string | null; readonly userAgent: string | null },
  times: { readonly at: number; readonly expiresAt: number },
  sealedCode: string,
): NotificationPayload {
  return {
    type: 'password.recovery',
    timestamp: new Date(times.at).toISOString(),
    data: {
      school_id: admin.school_key,
      username: admin.username,
      admin_id: admin.id,
      session_id: null,
      ip: from.ip,
      user_agent: from.userAgent?.slice(0, 512) ?? null,
      detail: new Date(times.expiresAt * 1000).toISOString(),
      code: sealedCode,
    },
  };
}
