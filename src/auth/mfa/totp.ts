import { Secret, TOTP } from 'otpauth';
import { secureRandomBytes } from '../secure-random.js';

/** RFC 6238 as authenticator apps implement it: HMAC-SHA-1, 6 digits, 30 s steps. */
const TOTP_SETTINGS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;

/** One step of clock drift either way (RFC 6238 §5.2). */
const DRIFT_STEPS = 1;

/** A new shared secret: 160 bits from the CSPRNG (RFC 4226 §4 recommends 160), base32 as apps expect. */
export function generateTotpSecret(): string {
  return new Secret({ buffer: secureRandomBytes(20).buffer }).base32;
}

/** The `otpauth://` URI an authenticator app reads from a QR code. */
export function otpauthUri(secret: string, issuer: string, label: string): string {
  return new TOTP({ ...TOTP_SETTINGS, issuer, label, secret: Secret.fromBase32(secret) }).toString();
}

/**
 * The RFC 6238 time step `code` belongs to, within one step of `nowMs`, or undefined. The caller
 * must still claim the step (accept only a step later than the last one used), so that a code is
 * accepted at most once.
 */
export function matchTotpStep(secret: string, code: string, nowMs: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const totp = new TOTP({ ...TOTP_SETTINGS, secret: Secret.fromBase32(secret) });
  const delta = totp.validate({ token: code, timestamp: nowMs, window: DRIFT_STEPS });
  if (delta === null) return undefined;
  return Math.floor(nowMs / 1000 / TOTP_SETTINGS.period) + delta;
}
